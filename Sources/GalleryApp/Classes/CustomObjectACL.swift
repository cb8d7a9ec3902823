/// Per-object ACLs on custom classes, applied as Parse Server applies `_rperm`/`_wperm`
/// (docs/decisions/036): an object without an ACL is public (read and write), `{}` is the master
/// key's alone, and otherwise a caller reads (writes) it when one of their principals — `*`, their
/// objectId, `role:<Name>` for each of their roles (`ParseAccess.roleNames`) — is granted read
/// (write). The master key is never filtered. Each table keeps `readers` and `writers` generated
/// from `acl` (migration 0024), so the test is one array overlap in SQL.
enum CustomObjectACL {
    /// The generated columns and the index every custom table has (SchemaService.createClass;
    /// migration 0024 adds them to the tables made before it), for the table named `table`.
    static func columnsDDL(table: String) -> String {
        """
        alter table \(table)
            add column readers text[] generated always as
                (case when acl is null then '{*}'::text[] else acl_readers(acl) end) stored,
            add column writers text[] generated always as
                (case when acl is null then '{*}'::text[] else acl_writers(acl) end) stored;
        create index \(table)_private on \(table) (object_id) include (readers) where not (readers @> '{*}'::text[]);
        """
    }

    /// The ACL keys that grant the caller of `access`, nil for the master key (no filter). Unlike
    /// the built-in classes (where `public_read` is the operator's opt-in), a caller without a
    /// session is `*` here: the class-level permissions already decided whether they may ask.
    static func principals(_ access: ParseAccess) -> [String]? {
        switch access.caller {
        case .master: return nil
        case .anonymous: return ["*"]
        case .user: return access.principals
        }
    }

    /// SQL true for the rows aliased `alias` that `access` may read (`need == .read`) or change;
    /// nil for the master key.
    static func filter(alias: String, access: ParseAccess, need: ParseAccessNeed, binds: inout ParseSQLCompiler.Binds)
        -> String?
    {
        guard let principals = principals(access) else { return nil }
        let column = need == .read ? "readers" : "writers"
        return "\(alias).\(column) && " + binds.add(.textArray(principals), cast: "text[]")
    }

    /// The terms (each starting ` and `) an UPDATE or DELETE of `custom`'s table adds so that it
    /// changes no row `access` may not write: the object's ACL (`writers`) and, under a pointer
    /// permission (`writeUserFields`), one of the named `_User` pointers naming the caller. A
    /// missing row, another's row: both no row, 101.
    static func writableSQL(
        _ custom: CustomClass, grant: ClassLevelPermissions.Grant, access: ParseAccess,
        binds: inout ParseSQLCompiler.Binds
    ) -> String {
        var sql = filter(alias: custom.table, access: access, need: .edit, binds: &binds).map { " and " + $0 } ?? ""
        if case .pointedBy(let fields) = grant {
            guard let userId = access.caller.userId else { return sql + " and false" }
            let user = binds.add(.text(userId), cast: "text")
            let columns = fields.compactMap { custom.field(named: $0)?.column }
            sql +=
                " and (" + (columns.map { "\(custom.table).\($0) = \(user)" } + ["false"]).joined(separator: " or ")
                + ")"
        }
        return sql
    }

    /// The unconditioned count of a custom table for `access`: the table's O(1) counter less the
    /// rows the caller may not read, found among the rows not everyone may read (the partial index
    /// `<table>_private`): O(1) in a public class, the number of private rows otherwise.
    static func countSQL(table: String, counter: String, access: ParseAccess) -> ParseSQLStatement {
        let total = "coalesce((select n from row_counts where name = '\(counter)'), 0)"
        guard let principals = principals(access) else {
            return ParseSQLStatement(sql: "select \(total)", binds: [])
        }
        let hidden =
            "select count(*) from \(table) t where not (t.readers @> '{*}'::text[]) and not (t.readers && $1::text[])"
        return ParseSQLStatement(sql: "select \(total) - (\(hidden))", binds: [.textArray(principals)])
    }

    /// Whether a row a LiveQuery notification carries (`acl` as decoded JSON: NSNull or absent
    /// when the object has none) may be read by `access`: the same rule as `filter`.
    static func grantsRead(_ acl: Any?, to access: ParseAccess) -> Bool {
        guard let principals = principals(access) else { return true }
        guard let acl = acl as? [String: Any] else { return true }
        return principals.contains { (acl[$0] as? [String: Any])?["read"] as? Bool == true }
    }
}
