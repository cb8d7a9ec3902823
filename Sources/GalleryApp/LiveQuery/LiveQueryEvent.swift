import Foundation

/// One change announced by the `live_query_notify` trigger (migration 0011): the class, the
/// operation and the row before and after, keyed by column name.
struct LiveQueryEvent {
    /// `insert`, `update` or `delete`.
    enum Operation: String { case insert, update, delete }

    let schema: ParseClassSchema
    let operation: Operation
    let old: [String: Any]?
    let new: [String: Any]?
    /// For a GalleryItem: its gallery's `owner_id` and `acl`, whose readers are the item's.
    var gallery: [String: Any]? = nil
    /// For a custom class: its class-level permissions as they are now (the caller needs `find`).
    var permissions: ClassLevelPermissions? = nil

    /// Decodes a NOTIFY payload; nil (with the reason) for one that cannot be used. `customClasses`
    /// finds a custom class by name (migration 0025 announces their rows too); `appFields` gives a
    /// built-in class's schema with the fields an app added to it, whose columns the row carries.
    static func decode(
        _ payload: String, customClasses: (String) -> CustomClass? = { _ in nil },
        appFields: (ParseClassSchema) -> ParseClassSchema = { $0 }
    ) -> (event: LiveQueryEvent?, problem: String?) {
        guard let data = payload.data(using: .utf8),
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let className = object["className"] as? String,
            let op = (object["op"] as? String).flatMap(Operation.init(rawValue:))
        else { return (nil, "undecodable payload") }
        let builtIn = ParseClassSchema.builtIn(named: className).map(appFields)
        let custom = builtIn == nil ? customClasses(className) : nil
        guard let schema = builtIn ?? custom?.schema else {
            return (nil, "no class \(className.prefix(100))")
        }
        if object["truncated"] as? Bool == true {
            return (nil, "row too large for a NOTIFY payload: \(className) \(object["objectId"] ?? "")")
        }
        return (
            LiveQueryEvent(
                schema: schema, operation: op, old: object["old"] as? [String: Any],
                new: object["new"] as? [String: Any],
                gallery: object["gallery"] as? [String: Any], permissions: custom?.permissions),
            nil
        )
    }

    /// A row as the Parse object a find would return (files with URLs, dates and pointers typed),
    /// limited to `keys` (plus objectId, createdAt, updatedAt) when given.
    /// Whether `access` may read `row` (the row before or after the change): the rules of
    /// `ParseSQLCompiler+Access`, applied to the row the notification carries.
    func readable(_ row: [String: Any], by access: ParseAccess) -> Bool {
        if schema.isCustom {
            // A custom class: its class-level permissions as they are now, then the object's ACL.
            if access.caller.isMaster { return true }
            if let permissions, !permissions.allows(.find, userId: access.caller.userId, roles: Set(access.roleNames)) {
                return false
            }
            return CustomObjectACL.grantsRead(row["acl"], to: access)
        }
        if schema.className == ParseClassSchema.user.className {
            // Every account, to every user and with `public_read` to anyone, as a find of `_User`.
            return access.caller != .anonymous || access.publicRead
        }
        let principals = access.principals
        switch access.caller {
        case .master:
            return true
        case .anonymous:
            guard access.publicRead else { return false }
            switch schema.className {
            case "Photo": return Self.live(row) && Self.grants(row["acl"], toAnyOf: principals)
            case "Gallery": return Self.grants(row["acl"], toAnyOf: principals)
            default: return Self.grants(gallery?["acl"], toAnyOf: principals)
            }
        case .user(let userId):
            switch schema.className {
            case "Photo":
                // A trashed photo is its owner's alone.
                return row["owner_id"] as? String == userId
                    || (Self.live(row) && Self.grants(row["acl"], toAnyOf: principals))
            case "Gallery":
                return row["owner_id"] as? String == userId || Self.grants(row["acl"], toAnyOf: principals)
            default:
                guard let gallery else { return false }
                return gallery["owner_id"] as? String == userId || Self.grants(gallery["acl"], toAnyOf: principals)
            }
        }
    }

    /// Whether a row is out of the trash.
    private static func live(_ row: [String: Any]) -> Bool {
        row["deleted_at"] == nil || row["deleted_at"] is NSNull
    }

    /// Whether a stored ACL grants read to one of `principals` (`ParseAccess.principals`).
    private static func grants(_ acl: Any?, toAnyOf principals: [String]) -> Bool {
        guard let acl = acl as? [String: Any] else { return false }
        return principals.contains { (acl[$0] as? [String: Any])?["read"] as? Bool == true }
    }

    func parseObject(_ row: [String: Any], keys: Set<String>?, encoder: ParseObjectEncoder) -> [String: Any] {
        var object: [String: Any] = ["className": schema.className]
        for field in schema.fields {
            guard case .column(let column) = field.source, let raw = row[column], !(raw is NSNull) else { continue }
            if let keys, !keys.contains(field.name), !["objectId", "createdAt", "updatedAt"].contains(field.name) {
                continue
            }
            switch field.type {
            case .date:
                guard let text = raw as? String, let date = ParseDate.parse(text) else { continue }
                let iso = ParseDate.format(date)
                object[field.name] = field.isBuiltInDate ? iso : ["__type": "Date", "iso": iso]
            case .file:
                guard let key = raw as? String else { continue }
                // The name a find gives (`ParseFileURLs.writeFile`): the key's last segment, the
                // name the upload answered, which a client may save back; not the key.
                let name = key.lastIndex(of: "/").map { String(key[key.index(after: $0)...]) } ?? key
                object[field.name] = ["__type": "File", "name": name, "url": encoder.url(forKey: key)]
            case .pointer(let target):
                guard let id = raw as? String else { continue }
                object[field.name] = ["__type": "Pointer", "className": target, "objectId": id]
            default:
                object[field.name] = raw
            }
        }
        return object
    }
}
