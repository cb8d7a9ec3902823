import Postgres

/// A save's operations on one Relation field of a custom class (`{"__op":"AddRelation","objects":
/// [<pointers>]}`, `RemoveRelation`, or a `Batch` of them, as the SDKs send them): the objectIds
/// added to and removed from its join table. 111 for anything else sent to a Relation, or a
/// pointer to another class than its target; 106 for a malformed pointer.
struct CustomRelationChange: Equatable, Sendable {
    /// The field's join table (`custom_<n>_r<k>`).
    let joinTable: String
    /// The objectIds added, and those removed.
    var added: [String] = []
    var removed: [String] = []

    /// The most objects one save may add to or remove from a relation.
    static let maxObjects = 1_000

    /// Parses the value sent for the Relation `field` of `className`.
    static func parse(_ json: ParseJSONValue, field: CustomClass.Field, className: String) throws
        -> CustomRelationChange
    {
        guard let joinTable = field.joinTable, let target = field.type.targetClass else {
            throw ParseError.incorrectType("\(field.name) has no join table: delete the field and add it again.")
        }
        var change = CustomRelationChange(joinTable: joinTable)
        try change.apply(json, field: field.name, target: target, className: className, nested: false)
        return change
    }

    private mutating func apply(
        _ json: ParseJSONValue, field: String, target: String, className: String, nested: Bool
    ) throws {
        guard case .object(let object) = json, case .string(let op)? = object["__op"] else {
            throw ParseError.incorrectType(
                "schema mismatch for \(className).\(field); expected Relation<\(target)> but got \(json.typeName)")
        }
        switch op {
        case "AddRelation", "RemoveRelation":
            guard case .array(let objects)? = object["objects"], object.members.count == 2 else {
                throw ParseError.invalidJSON("\(op) needs an objects array")
            }
            guard objects.count <= Self.maxObjects else {
                throw ParseError.invalidJSON("\(op) takes at most \(Self.maxObjects) objects")
            }
            let ids = try objects.map { try Self.objectId($0, target: target, field: field) }
            if op == "AddRelation" { added += ids } else { removed += ids }
        case "Batch" where !nested:
            guard case .array(let ops)? = object["ops"], ops.count <= 2 else {
                throw ParseError.invalidJSON("A Batch holds at most an AddRelation and a RemoveRelation.")
            }
            for inner in ops { try apply(inner, field: field, target: target, className: className, nested: true) }
        default:
            throw ParseError.incorrectType("\(field) is a Relation: it takes AddRelation or RemoveRelation.")
        }
    }

    /// The objectId of a pointer to `target` in a relation operation.
    private static func objectId(_ json: ParseJSONValue, target: String, field: String) throws -> String {
        guard case .object(let pointer) = json,
            pointer["__type"] == .string("Pointer") || pointer["__type"] == .string("Object")
        else { throw ParseError.invalidPointer("\(field): a relation takes pointers") }
        guard pointer["className"] == .string(target) else {
            throw ParseError.incorrectType("\(field) relates to \(target), not to another class")
        }
        guard case .string(let id)? = pointer["objectId"], ParseObjectID.isPlausible(id) else {
            throw ParseError.invalidPointer("invalid Pointer objectId in \(field)")
        }
        return id
    }

    /// Applies the change for the object `owningId`, in the save's transaction: added pairs once
    /// each, removed ones gone (removing a pair that is not there is no error, as on Parse Server).
    func run(on connection: PostgresConnection, owningId: String) throws {
        if !added.isEmpty {
            try connection.query(
                "insert into \(joinTable) (owning_id, related_id) select $1::text, unnest($2::text[])"
                    + " on conflict do nothing", [SQLValue.text(owningId), .textArray(added)].postgresBinds)
        }
        if !removed.isEmpty {
            try connection.query(
                "delete from \(joinTable) where owning_id = $1::text and related_id = any($2::text[])",
                [SQLValue.text(owningId), .textArray(removed)].postgresBinds)
        }
    }
}
