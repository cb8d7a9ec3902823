extension ParseSQLCompiler {
    /// The select-list entry of a protected field of `t` shown only on the rows whose `_User`
    /// pointer columns `pointers` (`protectedFields` `userField:` entries) hold the caller's id:
    /// null elsewhere, so left out as Parse Server leaves it out. Without a session, always null.
    static func revealedExpression(
        _ field: ParseField, pointers: [String], access: ParseAccess, binds: inout Binds
    ) -> String {
        guard let userId = access.caller.userId, !pointers.isEmpty else {
            return "null::\(field.type.sqlCast) as \(field.column)"
        }
        let caller = binds.add(.text(userId), cast: "text")
        let pointing = pointers.map { "t.\($0) = \(caller)" }.joined(separator: " or ")
        return "case when \(pointing) then t.\(field.column) end as \(field.column)"
    }
}
