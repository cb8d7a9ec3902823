import Postgres

/// The changes `/parse/schemas` (and a save that adds a class or fields) makes to custom
/// classes: each one the DDL and its `custom_classes` row in the caller's transaction, so a
/// failure leaves no half-made class. Names are checked here (`ParseClassName`); SQL names
/// only what the server numbered (`custom_<n>`, `c<k>`, `custom_<n>_i<k>`).
struct SchemaService: Sendable {
    /// A requested index: its Parse name and fields with directions.
    struct IndexRequest: Sendable {
        let name: String
        let keys: [(field: String, direction: Int)]
    }

    /// A requested change of one field (PUT): add it with a type, or delete it.
    enum FieldChange: Sendable {
        case add(CustomFieldType)
        case delete
    }

    /// Where the classes live.
    let pool: PostgresPool
    /// The classes in memory, told of every change after commit.
    let catalog: CustomClassCatalog
    /// The built-in classes' class-level permissions.
    let builtIns: BuiltInClassPermissions
    /// The fields apps added to the built-in classes.
    let appFields: BuiltInAppFields

    /// Runs `body` in a transaction (a savepoint inside a caller's, such as an idempotent
    /// create's), then drops the catalog entry of `className`, whatever the outcome: the next
    /// lookup reads what was committed, never a change an outer transaction may still roll back.
    func changing<T>(_ className: String, _ body: (PostgresConnection) throws -> T) throws -> T {
        defer { catalog.forget(className) }
        return try pool.transaction(body)
    }

    /// Creates `className` with no fields of its own (103 when it exists or is a built-in class,
    /// or for a name Parse refuses). `ifAbsent`: an existing class is locked and returned instead.
    func createClass(
        on connection: PostgresConnection, _ className: String, permissions: ClassLevelPermissions,
        ifAbsent: Bool = false
    ) throws -> CustomClass {
        guard ParseClassName.isValidClassName(className) else { throw ParseClassName.invalidClassNameError(className) }
        guard ParseClassSchema.named(className) == nil, className != "_User" else {
            throw ParseError(code: ParseError.Code.invalidClassName, message: "Class \(className) already exists.")
        }
        // A second creator of the same name waits here for the first to commit, then gets no row.
        let inserted = try connection.query(
            "insert into custom_classes (class_name, table_id, clp) values ($1, nextval('custom_class_ids'), $2::jsonb)"
                + " on conflict (class_name) do nothing returning table_id",
            [className, permissions.json])
        guard let row = inserted.first else {
            guard ifAbsent, let existing = try lock(on: connection, className) else {
                throw ParseError(code: ParseError.Code.invalidClassName, message: "Class \(className) already exists.")
            }
            return existing
        }
        let tableId = try row.decode(Int64.self, 0)
        let table = CustomClass.table(tableId)
        try connection.execute(
            """
            create table \(table) (
                object_id text primary key, created_at timestamptz not null default now(),
                updated_at timestamptz not null default now(), acl jsonb);
            create index \(table)_created on \(table) (created_at, object_id);
            create trigger \(table)_count_insert after insert on \(table) referencing new table as new_rows
                for each statement execute function count_custom_rows('\(table)');
            create trigger \(table)_count_delete after delete on \(table) referencing old table as old_rows
                for each statement execute function count_custom_rows('\(table)');
            insert into row_counts (name, n) values ('\(table)', 0) on conflict (name) do update set n = 0;
            """)
        try connection.execute(CustomObjectACL.columnsDDL(table: table))
        // Its change scope and LiveQuery announcements (migration 0025).
        try connection.query(
            "select add_custom_change_triggers($1, $2), add_custom_live_query_trigger($1, $3)",
            [table, CustomClass.changeScope(className), className])
        return CustomClass(
            className: className, tableId: tableId, fields: [], nextColumn: 1, permissions: permissions, indexes: [])
    }

    /// The class locked for a change (`for update`), or nil when there is none.
    func lock(on connection: PostgresConnection, _ className: String) throws -> CustomClass? {
        try connection.query(
            "select \(CustomClassCatalog.columns) from custom_classes where class_name = $1 for update", [className]
        ).first.map(CustomClassCatalog.decode)
    }

    /// Adds a field (105 for a name Parse refuses, 136 for a default field; a field that exists
    /// is 255 unless it has this type, when nothing changes).
    func addField(on connection: PostgresConnection, _ custom: CustomClass, _ name: String, _ type: CustomFieldType)
        throws -> CustomClass
    {
        guard ParseClassName.isValidFieldName(name) else { throw ParseClassName.invalidFieldNameError(name) }
        guard !ParseClassName.defaultFields.contains(name) else {
            throw ParseError(code: ParseError.Code.changedImmutableField, message: "field \(name) cannot be added")
        }
        if let existing = custom.field(named: name) {
            guard existing.type == type else {
                throw ParseError(code: ParseError.Code.schemaConflict, message: "Field \(name) exists, cannot update.")
            }
            return custom
        }
        guard custom.fields.count < Self.maxFields else {
            throw ParseError(
                code: ParseError.Code.schemaConflict,
                message: "\(custom.className) has \(Self.maxFields) fields, the most a class may have.")
        }
        var column: String?
        var joinTable: String?
        if let sqlType = type.sqlType {
            column = "c\(custom.nextColumn)"
            try connection.execute("alter table \(custom.table) add column \(column!) \(sqlType)")
        } else {
            // A Relation: its join table, whose changes are the class's (migration 0025).
            let join = "\(custom.table)_r\(custom.nextColumn)"
            try connection.execute(
                """
                create table \(join) (
                    owning_id text not null references \(custom.table) (object_id) on delete cascade,
                    related_id text not null, primary key (owning_id, related_id));
                create index \(join)_related on \(join) (related_id, owning_id);
                """)
            try connection.query(
                "select add_custom_change_triggers($1, $2)", [join, CustomClass.changeScope(custom.className)])
            joinTable = join
        }
        return CustomClass(
            className: custom.className, tableId: custom.tableId,
            fields: custom.fields + [CustomClass.Field(name: name, type: type, column: column, joinTable: joinTable)],
            nextColumn: custom.nextColumn + 1, permissions: custom.permissions, indexes: custom.indexes)
    }

    /// The most fields a custom class may have (PostgreSQL allows 1,600 columns; dropped ones count).
    static let maxFields = 500

    /// Deletes a field and the indexes on it (255 when it does not exist, 136 for a default field).
    func deleteField(on connection: PostgresConnection, _ custom: CustomClass, _ name: String) throws -> CustomClass {
        guard !ParseClassName.defaultFields.contains(name) else {
            throw ParseError(code: ParseError.Code.changedImmutableField, message: "field \(name) cannot be changed")
        }
        guard let field = custom.field(named: name) else {
            throw ParseError(
                code: ParseError.Code.schemaConflict,
                message: "Field \(name.prefix(100)) does not exist, cannot delete.")
        }
        if let column = field.column {
            // Dropping the column drops the indexes that use it.
            try connection.execute("alter table \(custom.table) drop column \(column)")
        }
        if let joinTable = field.joinTable { try connection.execute("drop table \(joinTable)") }
        return CustomClass(
            className: custom.className, tableId: custom.tableId, fields: custom.fields.filter { $0.name != name },
            nextColumn: custom.nextColumn, permissions: custom.permissions,
            indexes: custom.indexes.filter { !$0.keys.contains { $0.field == name } })
    }

    /// Adds an index (102 for a name in use or a field that does not exist or cannot be ordered).
    func addIndex(on connection: PostgresConnection, _ custom: CustomClass, _ request: IndexRequest) throws
        -> CustomClass
    {
        guard ParseClassName.isValidIndexName(request.name), request.name != "_id_" else {
            throw ParseError.invalidQuery("invalid index name: \(request.name.prefix(100))")
        }
        guard !custom.indexes.contains(where: { $0.name == request.name }) else {
            throw ParseError.invalidQuery("Index \(request.name) exists, cannot update.")
        }
        guard !request.keys.isEmpty else { throw ParseError.invalidQuery("Index \(request.name) names no field.") }
        var columns: [String] = []
        for key in request.keys {
            let column: String?
            switch key.field {
            case "objectId": column = "object_id"
            case "createdAt", "_created_at": column = "created_at"
            case "updatedAt", "_updated_at": column = "updated_at"
            default: column = custom.schema.field(named: key.field).flatMap { $0.isSortable ? $0.column : nil }
            }
            guard let column else {
                throw ParseError.invalidQuery("Field \(key.field.prefix(100)) does not exist, cannot add index.")
            }
            columns.append(column + (key.direction < 0 ? " desc" : ""))
        }
        let sqlName = "\(custom.table)_i\(custom.nextColumn)"
        // object_id last, in the last key's direction, as every order ends with it so: one index
        // scan serves a page (forward or backward).
        let tieBreaker = request.keys.last!.direction < 0 ? "object_id desc" : "object_id"
        try connection.execute(
            "create index \(sqlName) on \(custom.table) (\(columns.joined(separator: ", ")), \(tieBreaker))")
        return CustomClass(
            className: custom.className, tableId: custom.tableId, fields: custom.fields,
            nextColumn: custom.nextColumn + 1,
            permissions: custom.permissions,
            indexes: custom.indexes + [CustomClass.Index(name: request.name, keys: request.keys, sqlName: sqlName)])
    }

    /// Drops an index (102 when there is none of that name).
    func deleteIndex(on connection: PostgresConnection, _ custom: CustomClass, _ name: String) throws -> CustomClass {
        guard let index = custom.indexes.first(where: { $0.name == name }) else {
            throw ParseError.invalidQuery("Index \(name.prefix(100)) does not exist, cannot delete.")
        }
        try connection.execute("drop index if exists \(index.sqlName)")
        return CustomClass(
            className: custom.className, tableId: custom.tableId, fields: custom.fields, nextColumn: custom.nextColumn,
            permissions: custom.permissions, indexes: custom.indexes.filter { $0.name != name })
    }

    /// Writes the class's fields, permissions and indexes to its `custom_classes` row.
    func store(on connection: PostgresConnection, _ custom: CustomClass) throws {
        _ = try connection.query(
            "update custom_classes set fields = $2::jsonb, next_column = $3::int, clp = $4::jsonb, indexes = $5::jsonb where class_name = $1",
            [
                custom.className, CustomClass.fieldsJSON(custom.fields), String(custom.nextColumn),
                custom.permissions.json,
                CustomClass.indexesJSON(custom.indexes),
            ])
    }

    /// Drops an empty class (255 while it has objects); a class that does not exist is no error.
    func deleteClass(on connection: PostgresConnection, _ className: String) throws {
        guard let custom = try lock(on: connection, className) else { return }
        let count =
            try connection.query("select count(*) from (select 1 from \(custom.table) limit 1) t").first?.decode(
                Int64.self, 0) ?? 0
        guard count == 0 else {
            let total =
                try connection.query("select n from row_counts where name = $1", [custom.counterName]).first?.decode(
                    Int64.self, 0) ?? 1
            throw ParseError(
                code: ParseError.Code.schemaConflict,
                message: "Class \(className) is not empty, contains \(total) objects, cannot drop schema.")
        }
        for joinTable in custom.fields.compactMap(\.joinTable) { try connection.execute("drop table \(joinTable)") }
        try connection.execute(
            "drop table \(custom.table); delete from row_counts where name = '\(custom.counterName)'")
        _ = try connection.query("delete from custom_classes where class_name = $1", [className])
    }
}
