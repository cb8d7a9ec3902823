/// A create or update of a `_Role` as the SDKs send it: `name`, `ACL`, and changes to the `users`
/// and `roles` relations (`{"__op":"AddRelation"|"RemoveRelation","objects":[<pointers>]}`, or a
/// `Batch` of both, as the JavaScript SDK sends when one save adds and removes). Checked here, so
/// `RoleRepository` only runs it: 142 for a bad name, 123 for a bad ACL, 111 for a value of the
/// wrong type or a pointer to the wrong class, 105 for an unknown field.
public struct ParseRoleWrite: Equatable, Sendable {
    /// One relation of a role.
    public enum Relation: String, Sendable {
        /// `users`: pointers to `_User`.
        case users
        /// `roles`: pointers to `_Role` (the roles whose users inherit this one).
        case roles

        /// The class its pointers name.
        public var targetClass: String { self == .users ? "_User" : "_Role" }
    }

    /// The objectIds to add to and remove from one relation.
    public struct RelationChange: Equatable, Sendable {
        public var added: [String] = []
        public var removed: [String] = []
    }

    /// The name sent, if any.
    public var name: String?
    /// The ACL sent, if any (required on create).
    public var acl: ParseACL?
    /// The changes of `users` and `roles`.
    public var users = RelationChange()
    public var roles = RelationChange()

    /// At most this many pointers in one relation operation.
    public static let maxObjects = 1_000

    /// Fields a saved object may send back unchanged (the SDKs echo them): ignored.
    private static let ignored: Set<String> = ["objectId", "createdAt", "updatedAt", "className", "__type"]

    /// Parses a body's members; `creating` requires a name and an ACL.
    public static func parse(_ body: ParseJSONObject, creating: Bool) throws -> ParseRoleWrite {
        var write = ParseRoleWrite()
        for member in body.members {
            switch member.key {
            case "name":
                guard case .string(let name) = member.value else {
                    throw ParseError.incorrectType("name must be a string.")
                }
                write.name = try ParseRoleName.checked(name)
            case "ACL":
                write.acl = try ParseACL.parse(member.value)
            case "users":
                write.users = try relationChange(member.value, .users)
            case "roles":
                write.roles = try relationChange(member.value, .roles)
            case let key where ignored.contains(key):
                continue
            default:
                throw ParseError.invalidKeyName(
                    "Invalid field name for _Role: \(ParseWhereParser.quoted(String(member.key.prefix(100)))).")
            }
        }
        if creating {
            guard write.name != nil else { throw ParseError.validationError("A role must have a name.") }
            guard write.acl != nil else { throw ParseError.invalidACL("A role must have an ACL.") }
        }
        return write
    }

    /// A relation's operation: AddRelation, RemoveRelation, a Batch of them, or the relation's own
    /// description (`{"__type":"Relation"}`, sent back by a fetched object: no change).
    private static func relationChange(_ value: ParseJSONValue, _ relation: Relation) throws -> RelationChange {
        guard case .object(let object) = value else {
            throw ParseError.incorrectType(
                "\(relation.rawValue) is a relation: send {\"__op\":\"AddRelation\",\"objects\":[…]}.")
        }
        if object["__type"] == .string("Relation") {
            guard object["className"] == .string(relation.targetClass) else {
                throw ParseError.incorrectType("\(relation.rawValue) is a relation to \(relation.targetClass).")
            }
            return RelationChange()
        }
        var change = RelationChange()
        switch object["__op"] {
        case .string("AddRelation")?:
            change.added = try pointers(object["objects"], relation)
        case .string("RemoveRelation")?:
            change.removed = try pointers(object["objects"], relation)
        case .string("Batch")?:
            guard case .array(let ops)? = object["ops"], ops.count <= 2 else {
                throw ParseError.invalidJSON("A Batch holds at most an AddRelation and a RemoveRelation.")
            }
            for op in ops {
                let inner = try relationChange(op, relation)
                change.added += inner.added
                change.removed += inner.removed
            }
        default:
            throw ParseError.incorrectType("\(relation.rawValue) takes AddRelation or RemoveRelation.")
        }
        return change
    }

    /// The objectIds of an operation's `objects`, each a pointer to the relation's class.
    private static func pointers(_ value: ParseJSONValue?, _ relation: Relation) throws -> [String] {
        guard case .array(let objects)? = value, !objects.isEmpty, objects.count <= maxObjects else {
            throw ParseError.invalidJSON("objects must be an array of 1 to \(maxObjects) pointers.")
        }
        return try objects.map { object in
            guard case .object(let pointer) = object,
                pointer["__type"] == .string("Pointer") || pointer["__type"] == .string("Object"),
                case .string(let id)? = pointer["objectId"], ParseObjectID.isPlausible(id)
            else { throw ParseError.incorrectType("\(relation.rawValue) holds pointers to \(relation.targetClass).") }
            guard pointer["className"] == .string(relation.targetClass) else {
                throw ParseError.incorrectType(
                    "\(relation.rawValue) holds pointers to \(relation.targetClass), not to another class.")
            }
            return id
        }
    }
}
