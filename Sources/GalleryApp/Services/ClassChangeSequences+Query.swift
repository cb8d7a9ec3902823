extension ClassChangeSequences {
    /// The sequences whose moves can change the answer to `query` for its caller, or nil when no
    /// sequence tracks something it reads (a subquery or include of `_User`, or of a class that
    /// does not exist): then it has no tag. A built-in
    /// class's are `dependencies(of:for:)`; a custom class's is its own scope (`Custom:<name>`,
    /// migration 0025), which moves with any write to its rows and any change of its schema or
    /// class-level permissions (the caller's roles are in the tag itself, `ParseAccess.tagKey`).
    /// A subquery or include adds its class's.
    static func dependencies(of query: ParseQuery) -> [String]? {
        guard !query.readsMissingClass else { return nil }
        var names: [String] = []
        for schema in [query.schema] + query.subqueries.map(\.schema) + query.includes.flatMap(\.schemas) {
            if schema.isCustom {
                names.append(CustomClass.changeScope(schema.className))
            } else if ParseClassSchema.named(schema.className) != nil {
                names += dependencies(of: schema.className, for: query.access)
            } else {
                return nil
            }
        }
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }
    }
}
