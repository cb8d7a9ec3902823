import Foundation
import Postgres

/// Lets the Parse encoder read database rows directly. A column that is missing, NULL or of
/// another type reads as nil (the encoder then leaves the field out, as Parse Server does).
extension PostgresRow: ParseRowSource {
    public func string(_ column: String) -> String? { (try? decode(String?.self, column)) ?? nil }
    public func int(_ column: String) -> Int64? { (try? decode(Int64?.self, column)) ?? nil }
    public func double(_ column: String) -> Double? { (try? decode(Double?.self, column)) ?? nil }
    public func date(_ column: String) -> Date? { (try? decode(Date?.self, column)) ?? nil }
    public func stringArray(_ column: String) -> [String]? { (try? decode([String]?.self, column)) ?? nil }
    public func bool(_ column: String) -> Bool? { (try? decode(Bool?.self, column)) ?? nil }
}
