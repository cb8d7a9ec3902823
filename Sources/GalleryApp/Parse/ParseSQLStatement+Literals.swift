import Foundation

extension ParseSQLStatement {
    /// The bound values as SQL literals, in order, for `EXECUTE name(…)` of this statement
    /// prepared by hand: quoted text in each type's input syntax (the placeholders' casts give
    /// the types, as they do for the driver's untyped text), `NULL` for null.
    public var bindLiterals: [String] { binds.map(\.sqlLiteral) }
}

extension SQLValue {
    /// The value as a quoted SQL literal in its type's input syntax (`NULL` for null).
    var sqlLiteral: String {
        switch self {
        case .null: return "NULL"
        case .textArray(let strings):
            let elements = strings.map { element in
                "\"" + element.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            }
            return Self.quoted("{" + elements.joined(separator: ",") + "}")
        default:
            return Self.quoted(arrayElementText)
        }
    }

    /// `text` in single quotes, with single quotes doubled (standard_conforming_strings, the
    /// default since PostgreSQL 9.1, so backslashes stay as they are).
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
