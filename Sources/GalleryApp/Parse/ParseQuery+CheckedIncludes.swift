/// Includes read as a get of their class would read them (docs/decisions/046). A pointer joined
/// into the page's statement (GalleryItem's `photo` and `gallery`, Gallery's `coverPhoto`) is
/// joined only while the target class's class-level permissions give the caller the whole `get`
/// with no field hidden; otherwise it is fetched after the page like any other include
/// (`ParseInclude`, `ParseAPI+Includes`), which leaves out the protected fields and the objects
/// whose pointer permissions (`readUserFields`) do not name the caller. A refused `get` is 119
/// (101 for `requiresAuthentication` without a session), as for a fetched include.
extension ParseQuery {
    /// `parseProjection`, with the joined includes the caller may not read whole moved to the
    /// fetched ones; `classes` resolves their classes (nil: the joins stay, as for the master key).
    static func checkedProjection(
        _ schema: ParseClassSchema, keys: String?, excludeKeys: String?, include: String?, includesScore: Bool,
        classes: ParseWhereParser.ClassResolver?
    ) throws -> (ParseProjection, Bool, [[String]]) {
        let parsed = try parseProjection(
            schema, keys: keys, excludeKeys: excludeKeys, include: include, includesScore: includesScore,
            classes: classes)
        guard let classes else { return parsed }
        var fetching: Set<String> = []
        for name in parsed.0.includes.keys.sorted() {
            guard let target = schema.field(named: name)?.pointerClassName,
                let readable = try classes(target, .include)
            else { continue }
            if !readable.hidden.isEmpty || readable.rows != nil { fetching.insert(name) }
        }
        guard !fetching.isEmpty else { return parsed }
        return try parseProjection(
            schema, keys: keys, excludeKeys: excludeKeys, include: include, includesScore: includesScore,
            classes: classes, fetching: fetching)
    }
}
