/// The access filter (docs/decisions/012-access-decided-in-sql.md), written once for every
/// statement that reads or changes a row of Photo, Gallery or GalleryItem:
///
/// - the master key: every row;
/// - a user: their own photos (a Photo find never shows another's), galleries they own or whose ACL
///   grants them (or `*`) read/write, and the items of galleries they may read/edit (photos reached
///   through those items, with `include`, are readable with them);
/// - no session (the app's keys alone): nothing, whether or not accounts exist, unless the operator
///   granted it: with `public_read`, the galleries whose ACL gives `*` read, and their items;
/// - the trash is its owner's: a trashed row (or a GalleryItem's trashed photo or gallery expanded
///   with `include`) is shown to no one else, even where a get by id or a `where` on `deletedAt`
///   reaches it (`trashFilter`).
extension ParseSQLCompiler {
    /// SQL false: the rows a caller without a session gets unless the operator granted them.
    static let noRowsSQL = "false"

    /// SQL true for the rows aliased `alias` of `schema` that `access` may `need`; nil for every row.
    static func accessFilter(
        _ schema: ParseClassSchema, alias: String, access: ParseAccess, need: ParseAccessNeed, binds: inout Binds
    ) -> String? {
        // A custom class: its class-level permissions were checked before the statement was made.
        if schema.isCustom { return nil }
        if schema.className == "_User" {
            // Every account is readable by every user (Parse Server's default), and by anyone with
            // `public_read`; its protected email is the select list's business (`selfOnly`).
            return access.caller == .anonymous && !access.publicRead ? noRowsSQL : nil
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
            guard access.publicRead, need == .read, schema.className != "Photo" else { return noRowsSQL }
            if schema.className == "Gallery" {
                return "\(alias).acl @> '{\"*\":{\"read\":true}}'"
            }
            return "exists (select 1 from galleries ag where ag.object_id = \(alias).gallery_id"
                + " and ag.acl @> '{\"*\":{\"read\":true}}')"
        }
    }

    /// SQL true for the rows of `query` whose trashed parts its caller may see, one term per part
    /// (none for the master key): the queried row itself when its class has a trash, and each
    /// trashed target a GalleryItem expands with `include` (`p`, `g`). A trashed part is its
    /// owner's alone; only a query that does not already hide the trash needs these.
    static func trashFilter(_ query: ParseQuery, binds: inout Binds) -> [String] {
        var aliases: [String] = query.schema.hasTrash ? ["t"] : []
        for name in query.schema.hiddenWithTrashedTargets where query.projection.includes[name] != nil {
            if let alias = query.schema.field(named: name)?.joinAlias { aliases.append(alias) }
        }
        switch query.access.caller {
        case .master:
            return []
        case .anonymous:
            return aliases.map { "\($0).deleted_at is null" }
        case .user(let userId):
            guard !aliases.isEmpty else { return [] }
            let user = binds.add(.text(userId), cast: "text")
            return aliases.map { "(\($0).deleted_at is null or \($0).owner_id = \(user))" }
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
