import Postgres

/// Parse Config's parameters (`parse_config`, migration 0022): read whole, changed by name.
struct ParseConfigRepository: Sendable {
    let pool: PostgresPool

    /// One parameter: its name, its JSON value as stored, and whether only the master key sees it.
    struct Parameter: Sendable {
        var name: String
        var json: String
        var masterKeyOnly: Bool
    }

    /// Every parameter (without the master-key-only ones unless `master`), by name.
    func all(master: Bool) throws -> [Parameter] {
        try pool.query(
            "select name, value::text, master_key_only from parse_config where $1::boolean or not master_key_only order by name",
            [master], retry: .safe
        ).map {
            Parameter(
                name: try $0.decode(String.self, 0), json: try $0.decode(String.self, 1),
                masterKeyOnly: try $0.decode(Bool.self, 2))
        }
    }

    /// Sets (`json` non-nil) or deletes parameters in one transaction.
    func apply(_ changes: [(name: String, json: String?, masterKeyOnly: Bool)]) throws {
        try pool.transaction { connection in
            for change in changes {
                if let json = change.json {
                    try connection.query(
                        """
                        insert into parse_config (name, value, master_key_only) values ($1, $2::jsonb, $3)
                        on conflict (name) do update set value = excluded.value, master_key_only = excluded.master_key_only,
                            updated_at = clock_timestamp()
                        """, [change.name, json, change.masterKeyOnly])
                } else {
                    try connection.query("delete from parse_config where name = $1", [change.name])
                }
            }
        }
    }
}
