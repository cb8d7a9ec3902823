/// A Parse ACL as a write sends it: `{"<userId>":{"read":true,"write":true},"*":{"read":true}}`.
/// Validated and normalized to the grants alone (false or missing permissions dropped, entries
/// without any grant dropped, keys sorted), so the stored jsonb answers "may U read?" with one
/// containment test (`acl @> {"U":{"read":true}}`). A role is granted as `"role:<Name>"` (a valid
/// role name, `ParseRoleName`; the role need not exist yet, as in Parse).
public struct ParseACL: Equatable, Sendable {
    /// One grantee: a user's objectId, `role:<Name>`, or `*` for everyone.
    public struct Grant: Equatable, Sendable {
        public var grantee: String
        public var read: Bool
        public var write: Bool
    }

    /// The grants, by grantee.
    public let grants: [Grant]

    /// At most this many grantees (a gallery shared with a few people, not a mailing list).
    public static let maxGrantees = 1_000

    /// Parses and checks an ACL value: 123 for anything malformed (a role key with an invalid name included).
    public static func parse(_ json: ParseJSONValue) throws -> ParseACL {
        guard case .object(let object) = json else { throw ParseError.invalidACL("ACL must be an object.") }
        guard object.members.count <= maxGrantees else {
            throw ParseError.invalidACL("ACL may name at most \(maxGrantees) users and roles.")
        }
        var grants: [Grant] = []
        for member in object.members {
            let grantee = member.key
            if grantee.hasPrefix("role:") {
                guard ParseRoleName.isValid(String(grantee.dropFirst(5))) else {
                    throw ParseError.invalidACL(
                        "ACL role names are letters, digits, _, - and spaces: \(ParseWhereParser.quoted(String(grantee.prefix(100))))."
                    )
                }
            } else if grantee != "*" && !ParseObjectID.isPlausible(grantee) {
                throw ParseError.invalidACL(
                    "ACL keys are user objectIds, \"role:<Name>\" or \"*\": \(ParseWhereParser.quoted(String(grantee.prefix(100))))."
                )
            }
            guard case .object(let permissions) = member.value else {
                throw ParseError.invalidACL("ACL.\(grantee) must be an object like {\"read\":true,\"write\":true}.")
            }
            var grant = Grant(grantee: grantee, read: false, write: false)
            for permission in permissions.members {
                guard case .bool(let allowed) = permission.value else {
                    throw ParseError.invalidACL("ACL.\(grantee).\(permission.key) must be true or false.")
                }
                switch permission.key {
                case "read": grant.read = allowed
                case "write": grant.write = allowed
                default:
                    throw ParseError.invalidACL(
                        "ACL permissions are read and write: \(ParseWhereParser.quoted(String(permission.key.prefix(100))))."
                    )
                }
            }
            if grant.read || grant.write { grants.append(grant) }
        }
        return ParseACL(grants: grants.sorted { $0.grantee < $1.grantee })
    }

    /// The normalized JSON the database stores (`{}` when nothing is granted).
    public var json: String {
        var writer = ParseJSONWriter()
        writer.beginObject()
        for grant in grants {
            writer.key(grant.grantee)
            writer.beginObject()
            if grant.read {
                writer.key("read")
                writer.bool(true)
            }
            if grant.write {
                writer.key("write")
                writer.bool(true)
            }
            writer.endObject()
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
