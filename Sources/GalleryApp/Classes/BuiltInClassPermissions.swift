import Postgres

/// The class-level permissions of the built-in classes (Photo, Gallery, GalleryItem), from
/// `builtin_class_permissions` (migration 0024), kept in memory. A class without a row is open to
/// every operation (`*`) but `addField` (`ClassLevelPermissions.builtInDefault`): the access filter
/// in SQL decides its rows, as it always has; a row set
/// through `PUT /parse/schemas/<Class>` is checked before that filter, as a custom class's is.
/// Another server's change is seen after a change here or a restart, as for custom classes.
final class BuiltInClassPermissions: Sendable {
    private let pool: PostgresPool
    /// The permissions read so far, by class name, each with whether it is the default.
    private let known = ClassNameCache<(permissions: ClassLevelPermissions, isDefault: Bool)>()

    /// Permissions reading through `pool`.
    init(pool: PostgresPool) {
        self.pool = pool
    }

    /// The permissions of the built-in class `className`.
    func permissions(of className: String) throws -> ClassLevelPermissions {
        try held(className).value.permissions
    }

    /// Whether `className` has the default permissions (none set through `/parse/schemas`).
    func isDefault(_ className: String) throws -> Bool {
        try held(className).value.isDefault
    }

    private func held(_ className: String) throws
        -> ClassNameCache<
            (
                permissions: ClassLevelPermissions, isDefault: Bool
            )
        >.Held
    {
        try known.held(className) {
            let row = try pool.query(
                "select clp::text from builtin_class_permissions where class_name = $1", [className], retry: .safe
            ).first
            let permissions =
                try row.map {
                    try ClassLevelPermissions.parse(
                        try ParseJSONParser.parse(Array(try $0.decode(String.self, 0).utf8), maxDepth: 16),
                        base: .builtInDefault)
                } ?? .builtInDefault
            return (permissions, permissions == .builtInDefault)
        }
    }

    /// Parses `json` as `set` stores it (107 for a malformed one), without storing it.
    static func parse(_ json: ParseJSONValue, of className: String) throws -> ClassLevelPermissions {
        let permissions = try ClassLevelPermissions.parse(json, base: .builtInDefault)
        guard permissions.readUserFields.isEmpty && permissions.writeUserFields.isEmpty else {
            throw ParseError.invalidJSON("readUserFields and writeUserFields are not supported on \(className)")
        }
        return permissions
    }

    /// Parses `json` (107 for a malformed one; pointer permissions are refused: built-in classes
    /// have their own owners) over the default, stores it and returns it.
    func set(_ className: String, _ json: ParseJSONValue) throws -> ClassLevelPermissions {
        let permissions = try Self.parse(json, of: className)
        try pool.transaction { connection in
            try connection.query(
                "insert into builtin_class_permissions (class_name, clp) values ($1, $2::jsonb)"
                    + " on conflict (class_name) do update set clp = excluded.clp",
                [className, permissions.json])
            // Other classes' answers read this class too (GalleryItem's `include=photo`, Gallery's
            // `coverPhoto`, a custom class's pointers): every class is re-tagged, so no answer tagged
            // under the old permissions is a 304 after the change.
            try connection.query(
                "select bump_class_change_sequence(class_name) from class_change_sequences order by lock_rank")
        }
        known.forget(className)
        return permissions
    }
}
