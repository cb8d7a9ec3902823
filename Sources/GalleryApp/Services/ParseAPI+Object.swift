import Postgres

/// Reading one object by a get's query: the class route's get and the account routes' (`me`,
/// login, `GET /users/<id>`) share it.
extension ParseAPI {
    /// The object a get's validated `query` reads, with its includes, as the answer writes it;
    /// nil when its caller may read none.
    func object(_ query: ParseQuery) throws -> [UInt8]? {
        let compiled = ParseSQLCompiler.compile(query)
        guard let select = compiled.select else { return nil }
        var encoder = self.encoder
        let row = try pool.withConnection { connection -> PostgresRow? in
            guard let row = try connection.query(select.sql, select.binds.postgresBinds, retry: .safe).first else {
                return nil
            }
            encoder.included = try includedObjects(
                query.includes, rows: [row], projection: compiled.projection, access: query.access,
                connection: connection)
            return row
        }
        return try row.map { try encoder.object($0, projection: compiled.projection) }
    }
}
