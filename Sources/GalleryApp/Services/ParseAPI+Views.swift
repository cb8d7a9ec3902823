/// The class operations on views over photos (`PhotoView`): reads run as Photo queries for the
/// caller, written under the view's names; every write is 119.
extension ParseAPI {
    /// The query of `GET /classes/<Class>` for `parseClass` (a view's translated to Photo's).
    func parseFind(_ parseClass: ParseClass, items: [(name: String, value: String)], access: ParseAccess) throws
        -> ParseQuery
    {
        guard case .view(let view) = parseClass else {
            return try ParseQuery.find(
                parseClass.schema, items: items, limits: limits,
                classes: { try self.otherClass($0, $1, access: access) })
        }
        return try view.findQuery(items, limits: limits)
    }

    /// `GET /classes/<View>/<objectId>`: the photo as the view shows it, when `access` may read it (101 otherwise).
    func getView(_ view: PhotoView, objectId: String, items: [(name: String, value: String)], access: ParseAccess)
        throws -> Result
    {
        var query = try view.getQuery(objectId: try Self.checkedObjectId(objectId), items, limits: limits)
        query.access = access
        let compiled = ParseSQLCompiler.compile(query)
        guard let select = compiled.select, let selection = query.view,
            let row = try pool.query(select.sql, select.binds.postgresBinds, retry: .safe).first
        else { throw ParseError.objectNotFound() }
        return Result(status: .ok, json: try selection.object(row, encoder: encoder))
    }

    /// 119 when `className` is a view: creates, updates and deletes go to Photo itself.
    func refuseViewWrite(_ className: String) throws {
        if let view = try views.view(named: className) { throw view.refuseWrite() }
    }
}
