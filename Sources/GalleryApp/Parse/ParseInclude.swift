/// One `include` path level that is fetched rather than joined: a pointer field whose objects are
/// read by one statement per level after the page (`ParseAPI+Includes`), Parse Server's
/// `includePath` without a query per row. `include=a.b` is `a` with the child `b`; the target
/// class is resolved once, with the caller's class-level permission to `get` it (its pointer
/// permissions and protected fields narrow what is shown).
public struct ParseInclude: Sendable {
    /// The pointer field, of the class one level up.
    public let field: String
    /// The pointed-to class; nil for a class that does not exist (the pointers are left out).
    public let schema: ParseClassSchema?
    /// The includes inside the pointed-to objects.
    public let children: [ParseInclude]
    /// The pointed-to class's fields its `protectedFields` hide from the caller: left out of the
    /// included objects, as a get of them leaves them out.
    public var hidden: Set<String> = []
    /// The condition the pointed-to class's pointer permissions (`readUserFields`) put on the
    /// included objects: only those pointing to the caller are shown, as a get shows only them
    /// (101 for the others); nil for every object the ACLs let the caller read.
    public var rows: ParseCondition? = nil

    /// Whether this level or one below names a class that does not exist.
    public var readsMissingClass: Bool { schema == nil || children.contains(where: \.readsMissingClass) }

    /// Every class read, this level's and those below.
    public var schemas: [ParseClassSchema] { (schema.map { [$0] } ?? []) + children.flatMap(\.schemas) }

    /// The deepest `include` path taken (`a.b.c.d.e`): each level is a statement.
    public static let maxDepth = 5

    /// The include tree of `paths` (each a list of field names) on `schema`: 102 for a name that is
    /// no field of its class or not a Pointer, or a path deeper than `maxDepth`. `classes` resolves
    /// the targets (nil: the built-in classes alone; a custom target is then a class that does not exist).
    static func tree(_ paths: [[String]], on schema: ParseClassSchema, classes: ParseWhereParser.ClassResolver?)
        throws -> [ParseInclude]
    {
        var order: [String] = []
        var rest: [String: [[String]]] = [:]
        for path in paths {
            guard let first = path.first else { continue }
            guard path.count <= maxDepth else {
                throw ParseError.invalidQuery("include paths go at most \(maxDepth) levels deep")
            }
            if rest[first] == nil { order.append(first) }
            rest[first, default: []] += path.count > 1 ? [Array(path.dropFirst())] : []
        }
        return try order.map { name in
            guard let field = schema.field(named: name) else {
                throw ParseError.invalidQuery("include names unknown field \(ParseWhereParser.quoted(name))")
            }
            guard let target = field.pointerClassName else {
                throw ParseError.invalidQuery("include: \(field.name) is not a Pointer")
            }
            let resolved: ParseReadableClass?
            if let classes {
                resolved = try classes(target, .include)
            } else {
                resolved = (ParseClassSchema.named(target) ?? (target == ParseClassSchema.user.className ? .user : nil))
                    .map { ParseReadableClass(schema: $0) }
            }
            let children = try resolved.map { try tree(rest[name] ?? [], on: $0.schema, classes: classes) } ?? []
            return ParseInclude(
                field: name, schema: resolved?.schema, children: children, hidden: resolved?.hidden ?? [],
                rows: resolved?.rows)
        }
    }
}
