// The manifest anchor (issue #17): what a reasonable engineer writes with Hummingbird 2 and
// PostgresNIO for `GET /parse/classes/Photo?limit=N&order=-createdAt` and `?count=1&limit=0`,
// reading the same tables as galleryd: a pool of connections, prepared statements, and a
// hand-written JSON writer into a ByteBuffer (Parse's shape, file URLs unsigned as with
// `bucket_public = true`). Only the manifest's two requests are served; anything else is 400/404.
//
// Env: PORT (18132), HOST (127.0.0.1), PG_SOCKET (a PostgreSQL unix socket path, e.g.
// DIR/.s.PGSQL.PORT), PG_USER (galleryd), PG_DATABASE (galleryd), POOL (connections, 10),
// PUBLIC_URL (http://127.0.0.1:PORT), BUCKET (gallery).
import Foundation
import Hummingbird
import Logging
import NIOCore
import PostgresNIO

let env = ProcessInfo.processInfo.environment
let port = Int(env["PORT"] ?? "") ?? 18132
let host = env["HOST"] ?? "127.0.0.1"
let publicURL = env["PUBLIC_URL"] ?? "http://\(host):\(port)"
let filePrefix = publicURL + "/" + (env["BUCKET"] ?? "gallery") + "/"

var pgConfiguration = PostgresClient.Configuration(
    unixSocketPath: env["PG_SOCKET"] ?? "/var/run/postgresql/.s.PGSQL.5432",
    username: env["PG_USER"] ?? "galleryd", password: nil, database: env["PG_DATABASE"] ?? "galleryd")
pgConfiguration.options.maximumConnections = Int(env["POOL"] ?? "") ?? 10
pgConfiguration.options.minimumConnections = pgConfiguration.options.maximumConnections
let client = PostgresClient(configuration: pgConfiguration)

/// The first page: live photos, newest first, the objectId as tie-breaker (the partial index
/// photos_live_created_idx serves it).
struct FirstPage: PostgresPreparedStatement {
    static let sql = """
        select object_id, created_at, updated_at, filename, title, tags, content_type, byte_size, checksum,
               width, height, aspect_ratio, taken_at, status, error, dominant_color, deleted_at,
               original_key, thumbnail_key, preview_key, thumbnail_width, thumbnail_height,
               preview_width, preview_height, owner_id
        from photos where deleted_at is null order by created_at desc, object_id desc limit $1
        """
    typealias Row = PostgresRow
    var limit: Int
    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(limit)
        return bindings
    }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// The live count, from the counter row the triggers keep (as galleryd reads it).
struct LiveCount: PostgresPreparedStatement {
    static let sql = "select n from row_counts where name = 'photos_live'"
    typealias Row = Int64
    func makeBindings() -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
}

/// A minimal JSON writer appending to a ByteBuffer.
struct JSONWriter {
    var buffer: ByteBuffer
    private var needsComma = false

    init(capacity: Int) { buffer = ByteBufferAllocator().buffer(capacity: capacity) }

    mutating func beginObject() {
        separate()
        buffer.writeInteger(UInt8(ascii: "{"))
        needsComma = false
    }
    mutating func endObject() {
        buffer.writeInteger(UInt8(ascii: "}"))
        needsComma = true
    }
    mutating func beginArray() {
        separate()
        buffer.writeInteger(UInt8(ascii: "["))
        needsComma = false
    }
    mutating func endArray() {
        buffer.writeInteger(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A key known to need no escaping.
    mutating func key(_ name: StaticString) {
        separate()
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeStaticString(name)
        buffer.writeStaticString("\":")
        needsComma = false
    }

    mutating func string(_ value: String, prefix: String = "") {
        separate()
        buffer.writeInteger(UInt8(ascii: "\""))
        if !prefix.isEmpty { escape(prefix) }
        escape(value)
        buffer.writeInteger(UInt8(ascii: "\""))
        needsComma = true
    }

    mutating func int(_ value: Int64) {
        separate()
        buffer.writeString(String(value))
        needsComma = true
    }

    mutating func double(_ value: Double) {
        separate()
        buffer.writeString(value.isFinite ? "\(value)" : "null")
        needsComma = true
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, computed from the epoch milliseconds (no DateFormatter).
    mutating func isoDate(_ date: Date) {
        separate()
        // PostgreSQL keeps microseconds: round to those first, then drop to milliseconds.
        let microseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let milliseconds = microseconds >= 0 ? microseconds / 1000 : (microseconds - 999) / 1000
        var days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let msOfDay = milliseconds - days * 86_400_000
        // Civil from days (Howard Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        buffer.writeInteger(UInt8(ascii: "\""))
        digits(year, 4)
        buffer.writeInteger(UInt8(ascii: "-"))
        digits(month, 2)
        buffer.writeInteger(UInt8(ascii: "-"))
        digits(day, 2)
        buffer.writeInteger(UInt8(ascii: "T"))
        digits(msOfDay / 3_600_000, 2)
        buffer.writeInteger(UInt8(ascii: ":"))
        digits(msOfDay / 60_000 % 60, 2)
        buffer.writeInteger(UInt8(ascii: ":"))
        digits(msOfDay / 1000 % 60, 2)
        buffer.writeInteger(UInt8(ascii: "."))
        digits(msOfDay % 1000, 3)
        buffer.writeStaticString("Z\"")
        needsComma = true
    }

    private mutating func digits(_ value: Int64, _ width: Int) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            buffer.writeInteger(UInt8(48 + rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    private mutating func separate() {
        if needsComma { buffer.writeInteger(UInt8(ascii: ",")) }
    }

    private mutating func escape(_ text: String) {
        let hex = Array("0123456789abcdef".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
            case 0x0A: buffer.writeStaticString("\\n")
            case 0x0D: buffer.writeStaticString("\\r")
            case 0x09: buffer.writeStaticString("\\t")
            case 0..<0x20:
                buffer.writeStaticString("\\u00")
                buffer.writeInteger(hex[Int(byte >> 4)])
                buffer.writeInteger(hex[Int(byte & 0x0F)])
            default: buffer.writeInteger(byte)
            }
        }
    }
}

extension JSONWriter {
    mutating func file(_ key: String) {
        beginObject()
        self.key("__type")
        string("File")
        self.key("name")
        string(String(key.split(separator: "/").last ?? ""))
        self.key("url")
        string(key, prefix: filePrefix)
        endObject()
    }

    /// One photo row as galleryd answers it: null columns left out.
    mutating func photo(_ row: PostgresRandomAccessRow) throws {
        beginObject()
        key("objectId")
        string(try row[0].decode(String.self))
        key("createdAt")
        isoDate(try row[1].decode(Date.self))
        key("updatedAt")
        isoDate(try row[2].decode(Date.self))
        key("filename")
        string(try row[3].decode(String.self))
        key("title")
        string(try row[4].decode(String.self))
        key("tags")
        beginArray()
        for tag in try row[5].decode([String].self) { string(tag) }
        endArray()
        key("contentType")
        string(try row[6].decode(String.self))
        key("byteSize")
        int(try row[7].decode(Int64.self))
        key("checksum")
        string(try row[8].decode(String.self))
        key("width")
        int(Int64(try row[9].decode(Int32.self)))
        key("height")
        int(Int64(try row[10].decode(Int32.self)))
        key("aspectRatio")
        double(try row[11].decode(Double.self))
        if let takenAt = try row[12].decode(Date?.self) {
            key("takenAt")
            beginObject()
            key("__type")
            string("Date")
            key("iso")
            isoDate(takenAt)
            endObject()
        }
        key("status")
        string(try row[13].decode(String.self))
        if let error = try row[14].decode(String?.self) {
            key("error")
            string(error)
        }
        if let color = try row[15].decode(String?.self) {
            key("dominantColor")
            string(color)
        }
        if let deletedAt = try row[16].decode(Date?.self) {
            key("deletedAt")
            beginObject()
            key("__type")
            string("Date")
            key("iso")
            isoDate(deletedAt)
            endObject()
        }
        key("original")
        file(try row[17].decode(String.self))
        if let thumbnail = try row[18].decode(String?.self) {
            key("thumbnail")
            file(thumbnail)
        }
        if let preview = try row[19].decode(String?.self) {
            key("preview")
            file(preview)
        }
        if let value = try row[20].decode(Int32?.self) {
            key("thumbnailWidth")
            int(Int64(value))
        }
        if let value = try row[21].decode(Int32?.self) {
            key("thumbnailHeight")
            int(Int64(value))
        }
        if let value = try row[22].decode(Int32?.self) {
            key("previewWidth")
            int(Int64(value))
        }
        if let value = try row[23].decode(Int32?.self) {
            key("previewHeight")
            int(Int64(value))
        }
        if let owner = try row[24].decode(String?.self) {
            key("owner")
            beginObject()
            key("__type")
            string("Pointer")
            key("className")
            string("_User")
            key("objectId")
            string(owner)
            endObject()
        }
        endObject()
    }
}

/// Parse's error body.
func parseError(_ status: HTTPResponse.Status, code: Int, _ message: String) -> Response {
    var writer = JSONWriter(capacity: 96)
    writer.beginObject()
    writer.key("code")
    writer.int(Int64(code))
    writer.key("error")
    writer.string(message)
    writer.endObject()
    return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: writer.buffer))
}

let router = Router()
router.get("/parse/classes/Photo") { request, _ -> Response in
    let parameters = request.uri.queryParameters
    let limit = parameters["limit"].map { Int(String($0)) } ?? 100
    guard let limit, (0...1000).contains(limit) else {
        return parseError(.badRequest, code: 102, "limit must be an integer from 0 to 1000.")
    }
    if let order = parameters["order"], order != "-createdAt" {
        return parseError(.badRequest, code: 105, "Only order=-createdAt is served by this anchor.")
    }
    let count = parameters["count"] == "1"
    var writer = JSONWriter(capacity: 64 + limit * 900)
    writer.beginObject()
    writer.key("results")
    writer.beginArray()
    if limit > 0 {
        for try await row in try await client.execute(FirstPage(limit: limit)) {
            try writer.photo(row.makeRandomAccess())
        }
    }
    writer.endArray()
    if count {
        var n: Int64 = 0
        for try await value in try await client.execute(LiveCount()) { n = value }
        writer.key("count")
        writer.int(n)
    }
    writer.endObject()
    return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: writer.buffer))
}
router.get("/health") { _, _ -> String in "ok" }

var logger = Logger(label: "manifest-anchor")
logger.logLevel = .warning
let app = Application(
    router: router, configuration: .init(address: .hostname(host, port: port)), services: [client], logger: logger)
try await app.runService()
