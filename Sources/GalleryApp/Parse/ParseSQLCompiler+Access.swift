/// The access filter (docs/decisions/012-access-decided-in-sql.md), written once for every
/// statement that reads or changes a row of Photo, Gallery or GalleryItem:
///
/// - the master key: every row;
/// - a user: their own photos and those whose ACL grants them read (as themselves, `*` or one of
///   their roles: `ParseAccess.principals`), galleries they own or whose ACL grants them read/write
///   the same way, and the items of galleries they may read/edit (photos reached through those
///   items, with `include`, are readable with them);
/// - no session (the app's keys alone): nothing, whether or not accounts exist, unless the operator
///   granted it: with `public_read`, the galleries and photos whose ACL gives `*` read, and the
///   galleries' items;
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
        // A custom class: its class-level permissions were checked before the statement was made;
        // its objects' ACLs decide the rows (CustomObjectACL).
        if schema.isCustom { return CustomObjectACL.filter(alias: alias, access: access, need: need, binds: &binds) }
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
                return photoFilter(alias: alias, user: user, access: access, need: need, binds: &binds)
            case "Gallery":
                return aclFilter(alias: alias, user: user, access: access, need: need, binds: &binds)
            default:  // GalleryItem: its gallery's access (to edit for any change of the item)
                let gallery = aclFilter(
                    alias: "ag", user: user, access: access, need: need == .read ? .read : .edit, binds: &binds)
                return "exists (select 1 from galleries ag where ag.object_id = \(alias).gallery_id and \(gallery))"
            }
        case .anonymous:
            guard access.publicRead, need == .read else { return noRowsSQL }
            if schema.className == "Photo" {
                return "(\(alias).readers <> '{}' and \(alias).readers @> '{*}')"
            }
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

    /// A photo's test for a user (`user` is the bound placeholder): its owner may do anything; its
    /// ACL grants others read (`readers`, GIN-indexed for the shared photos only, so the filter
    /// names `readers <> '{}'`) or write (containment, tested on one row by id).
    private static func photoFilter(
        alias: String, user: String, access: ParseAccess, need: ParseAccessNeed, binds: inout Binds
    ) -> String {
        let owner = "\(alias).owner_id = \(user)"
        switch need {
        case .own:
            return owner
        case .read:
            let principals = binds.add(.textArray(access.principals), cast: "text[]")
            return "(\(owner) or (\(alias).readers <> '{}' and \(alias).readers && \(principals)))"
        case .edit:
            return aclFilter(alias: alias, user: user, access: access, need: .edit, binds: &binds)
        }
    }

    /// An object's test for a user (`user` is the bound placeholder) through its owner and its
    /// ACL: owner, or granted read/write (`need`) by the ACL as themselves, `*` or one of their
    /// roles (one jsonb containment per principal: a user has few roles).
    private static func aclFilter(
        alias: String, user: String, access: ParseAccess, need: ParseAccessNeed, binds: inout Binds
    ) -> String {
        let owner = "\(alias).owner_id = \(user)"
        guard need != .own else { return owner }
        let permission = need == .read ? "read" : "write"
        var terms = [
            owner,
            "\(alias).acl @> jsonb_build_object(\(user), '{\"\(permission)\":true}'::jsonb)",
            "\(alias).acl @> '{\"*\":{\"\(permission)\":true}}'",
        ]
        for role in access.roleNames {
            let key = binds.add(.text("role:" + role), cast: "text")
            terms.append("\(alias).acl @> jsonb_build_object(\(key), '{\"\(permission)\":true}'::jsonb)")
        }
        return "(" + terms.joined(separator: " or ") + ")"
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
