import Foundation
import Postgres

/// Runs primary-key SELECTs through the pool for bench/db.sh (placeholder until the Postgres layer lands).
enum DBBench {
    static func run(_ arguments: [String]) { fatalError("not yet") }
}
