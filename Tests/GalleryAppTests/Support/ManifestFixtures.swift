import Foundation
import Postgres

@testable import GalleryApp

/// Photo rows for manifest tests, inserted straight into the database (no image processing),
/// and small helpers to read manifest responses.
enum ManifestFixtures {
    /// One photo row's values; defaults make a processed, live 400×300 photo.
    struct Row {
        var id: String
        var createdAt: Date  // stored truncated to milliseconds, as the app's defaults do
        var filename = "IMG_0001.jpg"
        var title = ""
        var tags: [String] = []
        var width = 400
        var height = 300
        var byteSize = 1000
        var status = "ready"
        var dominantColor: String? = "#336699"
        var takenAt: Date? = nil
        var deletedAt: Date? = nil
    }

    /// Inserts rows with parameterized INSERTs (checksum, keys and derivative sizes derived from the id).
    static func insert(_ server: TestServer, _ rows: [Row]) throws {
        for row in rows {
            try server.application.pool.query(
                """
                insert into photos (object_id, created_at, updated_at, filename, title, tags, byte_size, checksum,
                    width, height, aspect_ratio, status, dominant_color, taken_at, deleted_at, original_key,
                    thumbnail_key, preview_key, thumbnail_width, thumbnail_height, preview_width, preview_height)
                values ($1, date_trunc('milliseconds', $2::timestamptz), date_trunc('milliseconds', $2::timestamptz), $3, $4, $5, $6, encode(sha256(convert_to($1, 'UTF8')), 'hex'),
                    $7, $8, $7::float8 / $8::float8, $9, $10, $11, $12,
                    'originals/' || encode(sha256(convert_to($1, 'UTF8')), 'hex') || '.jpg',
                    'thumbnails/' || $1 || '.jpg', 'previews/' || $1 || '.jpg', 400, 300, 2048, 1536)
                """,
                [
                    row.id, row.createdAt, row.filename, row.title, row.tags, row.byteSize, row.width, row.height,
                    row.status, row.dominantColor, row.takenAt, row.deletedAt,
                ])
        }
    }

    /// Inserts `count` rows in one statement: ids `<prefix>000000001`…, created one `stepMs`
    /// apart (oldest first) from `start`, with `sameTimeEvery` consecutive rows sharing a
    /// timestamp so the objectId tie-breaker matters.
    static func insertMany(
        _ server: TestServer, count: Int, prefix: String = "p",
        start: Date = Date(timeIntervalSince1970: 1_600_000_000),
        stepMs: Int = 1000, sameTimeEvery: Int = 1
    ) throws {
        try server.application.pool.query(
            """
            insert into photos (object_id, created_at, updated_at, filename, title, tags, byte_size, checksum,
                width, height, aspect_ratio, status, original_key)
            select $1 || lpad(i::text, 10 - length($1), '0'), c, c, 'IMG_' || i || '.jpg', 'bulk ' || i, '{}', 1000,
                encode(sha256(convert_to($1 || i, 'UTF8')), 'hex'), 400, 300, 4.0 / 3, 'ready',
                'originals/' || encode(sha256(convert_to($1 || i, 'UTF8')), 'hex') || '.jpg'
            from generate_series(1, $2::int) i,
                lateral (select $3::timestamptz + make_interval(secs => ((i - 1) / $5::int) * $4::int / 1000.0) as c) t
            """, [prefix, count, start, stepMs, sameTimeEvery])
    }

    /// A `where` for `GET /parse/classes/Photo` as a query item value.
    static func query(_ items: [String: String]) -> String {
        var components = URLComponents()
        components.queryItems = items.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        // URLComponents leaves `+` alone, which the server reads as a space.
        return components.percentEncodedQuery!.replacingOccurrences(of: "+", with: "%2B")
    }

    /// `GET /parse/classes/<Class>?…` with these parameters (with the app id alone when `anonymous`).
    static func find(
        _ server: TestServer, _ items: [String: String] = [:], className: String = "Photo",
        headers: [String: String] = [:], anonymous: Bool = false
    ) throws -> TestServer.Response {
        let q = query(items)
        return try server.request(
            "GET", "/parse/classes/\(className)" + (q.isEmpty ? "" : "?" + q), headers: headers, anonymous: anonymous)
    }

    /// The objectIds of a find response, in order.
    static func ids(_ response: TestServer.Response) -> [String] {
        ((response.json["results"] as? [[String: Any]]) ?? []).compactMap { $0["objectId"] as? String }
    }

    /// The objects of a find response.
    static func results(_ response: TestServer.Response) -> [[String: Any]] {
        (response.json["results"] as? [[String: Any]]) ?? []
    }

    /// The error code of a Parse error response (nil when there is none).
    static func code(_ response: TestServer.Response) -> Int? {
        response.json["code"] as? Int
    }

    /// JSON text of a value (for `where`).
    static func json(_ object: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// A Parse Date value.
    static func date(_ date: Date) -> [String: Any] {
        ["__type": "Date", "iso": ParseDate.format(date)]
    }

    /// The number of rows in `photos`, live and trashed, counted for real.
    static func tableCount(_ server: TestServer) throws -> Int64 {
        try server.application.pool.query("select count(*) from photos").first!.decode(Int64.self, 0)
    }

    /// Sends raw bytes to the server and reads the response until the server closes
    /// (`Connection: close` in `request`): status, headers (lowercased names) and body.
    static func rawExchange(port: Int, _ request: [UInt8]) throws -> (
        status: Int, headers: [String: String], body: [UInt8]
    ) {
        let response = try RawHTTP.exchange(port: port, bytes: request)
        var headers: [String: String] = [:]
        for (name, value) in response.headers { headers[name.lowercased()] = value }
        var body = response.body
        if let length = headers["content-length"].flatMap(Int.init), body.count > length {
            body = Array(body[0..<length])
        }
        return (response.status, headers, body)
    }

    /// Decompresses a gzip member with the system's `gzip -dc`.
    static func gunzip(_ bytes: [UInt8]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "gzip -dc"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let writer = Thread {
            input.fileHandleForWriting.write(Data(bytes))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestSetupError(description: "gzip -dc failed") }
        return data
    }
}
