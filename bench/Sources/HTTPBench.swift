import Foundation
import HTTPServer

/// Serves a fixed 2 KiB body for bench/http.sh (placeholder until the HTTP server lands).
enum HTTPBench {
    static func run(_ arguments: [String]) { fatalError("not yet") }
}
