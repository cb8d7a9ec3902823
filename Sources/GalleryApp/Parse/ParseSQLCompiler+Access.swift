/// The access filter (docs/decisions/012-access-decided-in-sql.md), written once for every
/// statement that reads or changes a row of Photo, Gallery or GalleryItem:
///
/// - the master key: every row;
/// - a user: their own photos (a Photo find never shows another's), galleries they own or whose ACL
///   grants them (or `*`) read/write, and the items of galleries they may read/edit (photos reached
///   through those items, with `include`, are readable with them);
/// - no session: nothing while accounts exist (public galleries and their items with
///   `public_read`), and everything while none exists yet (a single-tenant install, as before).
extension ParseSQLCompiler {
    /// True while no account exists: the app's keys alone then own every row (single tenant).
    static let noAccountsSQL = "not exists (select 1 from users)"

    /// SQL true for the rows aliased `alias` of `schema` that `access` may `need`; nil for every row.
    static func accessFilter(
        _ schema: ParseClassSchema, alias: String, access: ParseAccess, need: ParseAccessNeed, binds: inout Binds
    ) -> String? {
        if schema.className == "_User" {
            // Every account is readable by every user (Parse Server's default), and by anyone with
            // `public_read`; its protected email is the select list's business (`selfOnly`).
            return access.caller == .anonymous && !access.publicRead ? noAccountsSQL : nil
        }
        switch access.caller {
        case .master:
            return nil
        case .user(let userId):
            let user = binds.add(.text(userId), cast: "text")
            switch schema.className {
            case "Photo":
                return "\(alias).owner_id = \(user)"
            case "Gallery":
                return galleryFilter(alias: alias, user: user, need: need)
            default:  // GalleryItem: its gallery's access (to edit for any change of the item)
                let gallery = galleryFilter(alias: "ag", user: user, need: need == .read ? .read : .edit)
                return "exists (select 1 from galleries ag where ag.object_id = \(alias).gallery_id and \(gallery))"
            }
        case .anonymous:
            guard access.publicRead, need == .read, schema.className != "Photo" else { return noAccountsSQL }
            if schema.className == "Gallery" {
                return "(\(noAccountsSQL) or \(alias).acl @> '{\"*\":{\"read\":true}}')"
            }
            return "(\(noAccountsSQL) or exists (select 1 from galleries ag where ag.object_id = \(alias).gallery_id"
                + " and ag.acl @> '{\"*\":{\"read\":true}}'))"
        }
    }

    /// A gallery's test for a user (`user` is the bound placeholder): owner, or granted by its ACL.
    private static func galleryFilter(alias: String, user: String, need: ParseAccessNeed) -> String {
        let owner = "\(alias).owner_id = \(user)"
        switch need {
        case .own:
            return owner
        case .read, .edit:
            let permission = need == .read ? "read" : "write"
            return "(\(owner) or \(alias).acl @> jsonb_build_object(\(user), '{\"\(permission)\":true}'::jsonb)"
                + " or \(alias).acl @> '{\"*\":{\"\(permission)\":true}}')"
        }
    }

    /// `select 1` when `access` may `need` the object `objectId` of `schema`, no row otherwise
    /// (missing or not the caller's: both are 101, so ids do not leak existence).
    public static func accessCheck(
        _ schema: ParseClassSchema, objectId: String, access: ParseAccess, need: ParseAccessNeed
    ) -> ParseSQLStatement {
        var binds = Binds()
        let id = binds.add(.text(objectId), cast: "text")
        var sql = "select 1 from \(schema.table) t where t.object_id = \(id)"
        if let filter = accessFilter(schema, alias: "t", access: access, need: need, binds: &binds) {
            sql += " and " + filter
        }
        return ParseSQLStatement(sql: sql, binds: binds.values)
    }
}
