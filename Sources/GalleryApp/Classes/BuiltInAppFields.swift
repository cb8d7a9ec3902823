import Postgres

/// The fields an app added to a built-in class (Photo, Gallery, GalleryItem, `_User`), from
/// `builtin_class_fields` (migration 0028), kept in memory with the schema finds compile against.
/// Each is a typed, nullable column `app_<n>` of the class's own table, named by the server, so
/// `where`, `order` and `keys` work on it as on a fixed field, and a class without app fields
/// compiles to exactly the statements it had before (docs/decisions/042). Changes are made here,
/// DDL and row in the caller's transaction; another server's change is seen after a change here
/// or a restart, as for the class-level permissions.
final class BuiltInAppFields: Sendable {
    /// One class's app fields: as a custom class's fields (what `CustomObjectWrite` parses a
    /// body against; its table and permissions are not used) and the schema with them.
    struct Entry: Sendable {
        let fields: CustomClass
        let schema: ParseClassSchema
    }

    private let pool: PostgresPool
    /// The classes read so far.
    private let known = ClassNameCache<Entry>()

    /// App fields read through `pool`.
    init(pool: PostgresPool) {
        self.pool = pool
    }

    /// `base` with its app fields (`base` itself when it has none).
    func schema(of base: ParseClassSchema) throws -> ParseClassSchema { try entry(base).value.schema }

    /// The app fields of `base`.
    func fields(of base: ParseClassSchema) throws -> CustomClass { try entry(base).value.fields }

    private func entry(_ base: ParseClassSchema) throws -> ClassNameCache<Entry>.Held {
        try known.held(base.className) {
            let row = try pool.query(
                "select fields::text, next_column from builtin_class_fields where class_name = $1", [base.className],
                retry: .safe
            ).first
            let fields = try Self.decode(
                base, fieldsJSON: try row?.decode(String.self, 0) ?? "[]",
                nextColumn: try row?.decode(Int64.self, 1) ?? 1)
            return Entry(fields: fields, schema: base.adding(fields.fields))
        }
    }

    private static func decode(_ base: ParseClassSchema, fieldsJSON: String, nextColumn: Int64) throws -> CustomClass {
        try CustomClass.decode(
            className: base.className, tableId: 0, fieldsJSON: fieldsJSON, nextColumn: Int(nextColumn),
            clpJSON: "{}", indexesJSON: "[]")
    }

    /// Runs `body` in a transaction, then forgets what was held, whatever the outcome: the next
    /// read sees what was committed.
    func changing<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        defer { known.forget() }
        return try pool.transaction(body)
    }

    /// The app fields of `base`, locked for a change (`for update`) until the transaction ends.
    func lock(on connection: PostgresConnection, _ base: ParseClassSchema) throws -> CustomClass {
        try connection.query(
            "insert into builtin_class_fields (class_name) values ($1) on conflict (class_name) do nothing",
            [base.className])
        guard
            let row = try connection.query(
                "select fields::text, next_column from builtin_class_fields where class_name = $1 for update",
                [base.className]
            ).first
        else { throw ParseError.internalServerError("builtin_class_fields of \(base.className) unreadable") }
        return try Self.decode(
            base, fieldsJSON: try row.decode(String.self, 0), nextColumn: try row.decode(Int64.self, 1))
    }

    /// Adds the field `name` of `type` to `base` (`current`: its locked app fields): 105 for a
    /// name Parse refuses, 255 for a fixed field or an app field of another type (one of this
    /// type changes nothing), 119 for a Relation (a built-in table has no join tables).
    func addField(
        on connection: PostgresConnection, _ base: ParseClassSchema, _ current: CustomClass, _ name: String,
        _ type: CustomFieldType
    ) throws -> CustomClass {
        guard ParseClassName.isValidFieldName(name) else { throw ParseClassName.invalidFieldNameError(name) }
        if base.className == ParseClassSchema.user.className, ParseClassSchema.reservedUserFields.contains(name) {
            throw ParseError(code: ParseError.Code.changedImmutableField, message: "field \(name) cannot be added")
        }
        guard base.field(named: name) == nil, !ParseClassName.defaultFields.contains(name) else {
            throw ParseError(code: ParseError.Code.schemaConflict, message: "Field \(name) exists, cannot update.")
        }
        if let existing = current.field(named: name) {
            guard existing.type == type else {
                throw ParseError(code: ParseError.Code.schemaConflict, message: "Field \(name) exists, cannot update.")
            }
            return current
        }
        guard let sqlType = type.sqlType else {
            throw ParseError.operationForbidden("\(base.className) is built in: it cannot hold a Relation field.")
        }
        guard current.fields.count < SchemaService.maxFields else {
            throw ParseError(
                code: ParseError.Code.schemaConflict,
                message: "\(base.className) has \(SchemaService.maxFields) app fields, the most a class may have.")
        }
        let column = "app_\(current.nextColumn)"
        // A brief exclusive lock of a hot table: wait for it a while, never behind it for ever.
        try connection.execute("set local lock_timeout = '5s'")
        try connection.execute("alter table \(base.table) add column \(column) \(sqlType)")
        return CustomClass(
            className: current.className, tableId: 0,
            fields: current.fields + [CustomClass.Field(name: name, type: type, column: column)],
            nextColumn: current.nextColumn + 1, permissions: current.permissions, indexes: [])
    }

    /// Deletes the app field `name` of `base` and its values (255 when it has none such).
    func deleteField(
        on connection: PostgresConnection, _ base: ParseClassSchema, _ current: CustomClass, _ name: String
    ) throws -> CustomClass {
        guard let field = current.field(named: name), let column = field.column else {
            throw ParseError(
                code: ParseError.Code.schemaConflict,
                message: "Field \(name.prefix(100)) does not exist, cannot delete.")
        }
        try connection.execute("set local lock_timeout = '5s'")
        try connection.execute("alter table \(base.table) drop column \(column)")
        return CustomClass(
            className: current.className, tableId: 0, fields: current.fields.filter { $0.name != name },
            nextColumn: current.nextColumn, permissions: current.permissions, indexes: [])
    }

    /// Stores the app fields `current` of its class, and moves the class's change sequences
    /// (migrations 0010, 0020: the class's own and its readers' scopes, Photo's or the galleries')
    /// so no answer tagged before the change is a 304 after it (a deleted field's values are gone).
    /// `_User` has no sequence: no find that reads it is kept.
    func store(on connection: PostgresConnection, _ current: CustomClass) throws {
        try connection.query(
            "update builtin_class_fields set fields = $2::jsonb, next_column = $3 where class_name = $1",
            [current.className, CustomClass.fieldsJSON(current.fields), Int64(current.nextColumn)])
        guard current.className != ParseClassSchema.user.className else { return }
        try connection.query("select bump_class_change_sequence($1)", [current.className])
        try connection.query(
            "select bump_change_scope(scope) from change_scope_sequences where scope like $1 order by scope",
            [current.className == "Photo" ? "Photo:%" : "Reader:%"])
    }
}
