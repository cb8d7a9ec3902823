import Foundation

@testable import GalleryApp

/// A result row backed by a dictionary, standing in for a PostgreSQL row.
struct DictionaryRow: ParseRowSource {
    var values: [String: Any]

    init(_ values: [String: Any]) { self.values = values }

    func column(named name: String) -> String? { name }
    func string(_ column: String) -> String? { values[column] as? String }
    func int(_ column: String) -> Int64? { (values[column] as? Int).map(Int64.init) ?? values[column] as? Int64 }
    func double(_ column: String) -> Double? { values[column] as? Double }
    func date(_ column: String) -> Date? { values[column] as? Date }
    func stringArray(_ column: String) -> [String]? { values[column] as? [String] }
}

/// The WHERE fragment and binds for a `where` JSON text on `schema`.
func compileWhere(_ json: String, _ schema: ParseClassSchema = .photo, limits: ParseLimits = ParseLimits()) throws -> (
    String, [SQLValue]
) {
    var parser = ParseWhereParser(schema: schema, limits: limits)
    guard let condition = try parser.parse(ParseJSONParser.parse(json, maxDepth: limits.maxJSONDepth)) else {
        return ("", [])
    }
    var binds = ParseSQLCompiler.Binds()
    let sql = ParseSQLCompiler.conditionSQL(condition, schema: schema, binds: &binds, access: .master)
    return (sql, binds.values)
}

/// Compiles a find query from query items.
func compileFind(_ schema: ParseClassSchema, _ items: [(String, String)], limits: ParseLimits = ParseLimits()) throws
    -> ParseCompiledQuery
{
    let query = try ParseQuery.find(schema, items: items.map { (name: $0.0, value: $0.1) }, limits: limits)
    return ParseSQLCompiler.compile(query)
}

/// The Parse error code thrown by `body`, or nil when it does not throw a `ParseError`.
func parseErrorCode(_ body: () throws -> Void) -> Int? {
    do {
        try body()
        return nil
    } catch let error as ParseError {
        return error.code
    } catch {
        return nil
    }
}

/// The message of the `ParseError` thrown by `body`, or nil.
func parseErrorMessage(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as ParseError {
        return error.message
    } catch {
        return nil
    }
}

/// A date from an ISO string known to be valid.
func isoDate(_ text: String) -> Date {
    ParseDate.parse(text)!
}
