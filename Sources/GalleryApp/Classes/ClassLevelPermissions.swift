/// A class's class-level permissions (Parse's CLPs): for each operation, who may perform it —
/// `*` (anyone with the app's keys), `requiresAuthentication` (any signed-in user), a user's
/// objectId, or `role:<Name>`. The master key is never asked. Evaluated here and nowhere else.
struct ClassLevelPermissions: Equatable, Sendable {
    /// The operations a CLP governs.
    enum Operation: String, CaseIterable, Sendable {
        case get, find, count, create, update, delete, addField
    }

    /// Who may perform each operation (an operation without entries: only the master key).
    private(set) var entries: [Operation: Set<String>]
    /// `protectedFields`: for `*`, `authenticated`, a user's objectId or `role:<Name>`, the
    /// fields hidden from them (`hiddenFields(for:)`); for `userField:<pointer>`, the fields still
    /// hidden on the objects whose pointer names the caller (`revealingPointers`).
    private(set) var protectedFields: [String: [String]]
    /// `readUserFields`: `_User` pointer fields whose user may get, find and count an object
    /// without those operations' grant (Parse's pointer permissions).
    private(set) var readUserFields: [String] = []
    /// `writeUserFields`: the same for update and delete.
    private(set) var writeUserFields: [String] = []

    /// Permissions granting every operation to `grantees`.
    init(granting grantees: Set<String> = [], protectedFields: [String: [String]] = [:]) {
        var entries: [Operation: Set<String>] = [:]
        for operation in Operation.allCases { entries[operation] = grantees }
        self.entries = entries
        self.protectedFields = protectedFields
    }

    /// The default of a class created without `classLevelPermissions`: the master key alone
    /// (galleryd's safe default; Parse Server's is public — docs/decisions/031).
    static let masterOnly = ClassLevelPermissions()
    /// Parse Server's default: every operation open to anyone with the app's keys.
    static let `public` = ClassLevelPermissions(granting: ["*"])
    /// The built-in classes' default (`BuiltInClassPermissions`): every operation open (their
    /// statements' access filter decides the rows) but `addField`, the master key's, so a save
    /// adds a column to Photo's table only where `PUT /parse/schemas/Photo` granted it.
    static let builtInDefault: ClassLevelPermissions = {
        var permissions = ClassLevelPermissions.public
        permissions.entries[.addField] = []
        return permissions
    }()

    /// Whether `userId` (nil without a session), holding `roles`, may perform `operation`.
    func allows(_ operation: Operation, userId: String?, roles: Set<String>) -> Bool {
        guard let grantees = entries[operation] else { return false }
        if grantees.contains("*") { return true }
        guard let userId else { return false }
        if grantees.contains("requiresAuthentication") || grantees.contains(userId) { return true }
        return roles.contains { grantees.contains("role:" + $0) }
    }

    /// 119 (Parse Server's "Permission denied for action …") unless the caller may perform
    /// `operation` on `className`; 101 without a session when only signed-in users may.
    func require(_ operation: Operation, on className: String, caller: ParseCaller, roles: Set<String>) throws {
        if caller.isMaster || allows(operation, userId: caller.userId, roles: roles) { return }
        if caller.userId == nil, entries[operation]?.contains("requiresAuthentication") == true {
            throw ParseError.objectNotFound("Permission denied, user needs to be authenticated.")
        }
        throw ParseError.operationForbidden("Permission denied for action \(operation.rawValue) on class \(className).")
    }

    /// Parses `classLevelPermissions` as Parse Server's `validateCLP` checks it: 107 for an
    /// unknown operation, a value that is not an object, a key that is not `*`,
    /// `requiresAuthentication`, an objectId or `role:<Name>`, or a permission other than `true`.
    /// Operations not named keep their permissions from `base`.
    static func parse(_ json: ParseJSONValue, base: ClassLevelPermissions = .masterOnly) throws -> ClassLevelPermissions
    {
        guard case .object(let object) = json else {
            throw ParseError.invalidJSON("classLevelPermissions must be an object")
        }
        var permissions = base
        for member in object.members {
            let key = String(member.key.prefix(100))
            if key == "protectedFields" {
                permissions.protectedFields = try parseProtectedFields(member.value)
                continue
            }
            if key == "readUserFields" || key == "writeUserFields" {
                let fields = try parseUserFields(member.value, key: key)
                if key == "readUserFields" {
                    permissions.readUserFields = fields
                } else {
                    permissions.writeUserFields = fields
                }
                continue
            }
            guard let operation = Operation(rawValue: member.key) else {
                throw ParseError.invalidJSON("\(key) is not a valid operation for class level permissions")
            }
            guard case .object(let grants) = member.value else {
                throw ParseError.invalidJSON(
                    "'\(member.value.typeName)' is not a valid value for class level permissions \(key) - must be an object"
                )
            }
            var grantees: Set<String> = []
            for grant in grants.members {
                let grantee = grant.key
                guard isValidGrantee(grantee) else {
                    throw ParseError.invalidJSON(
                        "'\(grantee.prefix(100))' is not a valid key for class level permissions")
                }
                guard grant.value == .bool(true) else {
                    throw ParseError.invalidJSON(
                        "'\(grant.value.typeName)' is not a valid value for class level permissions \(key):\(grantee.prefix(100))"
                    )
                }
                grantees.insert(grantee)
            }
            permissions.entries[operation] = grantees
        }
        return permissions
    }

    /// `*`, `requiresAuthentication`, a plausible user objectId or `role:<Name>` (a role name as
    /// Parse allows them: letters, digits, `_`, `-` and spaces).
    private static func isValidGrantee(_ key: String) -> Bool {
        if key == "*" || key == "requiresAuthentication" || ParseObjectID.isPlausible(key) { return true }
        guard key.hasPrefix("role:") else { return false }
        let name = key.utf8.dropFirst(5)
        return !name.isEmpty && name.count <= 100
            && name.allSatisfy {
                ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 95 || $0 == 45
                    || $0 == 32
            }
    }

    /// The pointer field of a `protectedFields` key `userField:<field>` (Parse Server's
    /// pointer-permission form), or nil for any other key or an invalid field name.
    static func userFieldName(_ key: String) -> String? {
        guard key.hasPrefix("userField:") else { return nil }
        let field = String(key.dropFirst(10))
        return ParseClassName.isValidFieldName(field) ? field : nil
    }

    private static func parseUserFields(_ json: ParseJSONValue, key: String) throws -> [String] {
        guard case .array(let elements) = json else {
            throw ParseError.invalidJSON(
                "'\(json.typeName)' is not a valid value for class level permissions \(key)")
        }
        return try elements.map {
            guard case .string(let field) = $0, ParseClassName.isValidFieldName(field) else {
                throw ParseError.invalidJSON("\(key) must hold field names")
            }
            return field
        }
    }

    private static func parseProtectedFields(_ json: ParseJSONValue) throws -> [String: [String]] {
        guard case .object(let object) = json else {
            throw ParseError.invalidJSON(
                "'\(json.typeName)' is not a valid value for class level permissions protectedFields - must be an object"
            )
        }
        var result: [String: [String]] = [:]
        for member in object.members {
            guard
                member.key == "*" || member.key == "authenticated" || isValidGrantee(member.key)
                    || userFieldName(member.key) != nil
            else {
                throw ParseError.invalidJSON(
                    "'\(member.key.prefix(100))' is not a valid key for class level permissions")
            }
            guard case .array(let elements) = member.value else {
                throw ParseError.invalidJSON("protectedFields[\(member.key.prefix(100))] - expected an array.")
            }
            result[member.key] = try elements.map {
                guard case .string(let field) = $0, ParseClassName.isValidFieldName(field) else {
                    throw ParseError.invalidJSON("protectedFields[\(member.key.prefix(100))] must hold field names")
                }
                return field
            }
        }
        return result
    }

    /// Writes the permissions as Parse shows them: `{"find":{"*":true},…,"protectedFields":{…}}`.
    func write(into writer: inout ParseJSONWriter) {
        writer.beginObject()
        for operation in Operation.allCases {
            writer.key(operation.rawValue)
            writer.beginObject()
            for grantee in (entries[operation] ?? []).sorted() {
                writer.key(grantee)
                writer.bool(true)
            }
            writer.endObject()
        }
        for (key, fields) in [("readUserFields", readUserFields), ("writeUserFields", writeUserFields)]
        where !fields.isEmpty {
            writer.key(key)
            writer.beginArray()
            for field in fields { writer.string(field) }
            writer.endArray()
        }
        writer.key("protectedFields")
        writer.beginObject()
        for (grantee, fields) in protectedFields.sorted(by: { $0.key < $1.key }) {
            writer.key(grantee)
            writer.beginArray()
            for field in fields { writer.string(field) }
            writer.endArray()
        }
        writer.endObject()
        writer.endObject()
    }

    /// The stored JSON text.
    var json: String {
        var writer = ParseJSONWriter()
        write(into: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
