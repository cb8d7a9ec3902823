import Foundation
import Postgres

extension Array where Element == SQLValue {
    /// The values as Postgres binds (NULL for `.null`), in order.
    var postgresBinds: [PostgresBindable?] {
        map { value -> PostgresBindable? in
            switch value {
            case .null: return nil
            case .text(let s): return s
            case .int(let i): return i
            case .double(let d): return d
            case .bool(let b): return b
            case .timestamp(let d): return d
            case .textArray(let a): return a
            }
        }
    }
}
