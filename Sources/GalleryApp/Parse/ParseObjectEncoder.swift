import Foundation

/// Writes rows as Parse JSON objects: `objectId`, dates as `YYYY-MM-DDTHH:MM:SS.mmmZ`,
/// other dates as `{"__type":"Date","iso":…}`, files as `{"__type":"File","name":…,"url":…}`
/// with absolute URLs, pointers as `{"__type":"Pointer",…}` or, when included, full objects with
/// `"__type":"Object"`. Null fields are left out, as Parse Server's PostgreSQL adapter does; a
/// value that does not decode is an error (thrown), never a field left out.
public struct ParseObjectEncoder: Sendable {
    /// The public base URL of the server (no trailing slash), e.g. `https://photos.example`.
    public let publicURL: String
    /// The bucket name in asset URLs.
    public let bucket: String
    /// How file URLs are written (prefix, signer, the answer's one expiry).
    private let files: ParseFileURLs
    /// Objects fetched for `include` (`ParseAPI+Includes`), by pointer field, then objectId, as
    /// their JSON: a pointer field named here is written as its object, or left out when the
    /// object was not found (deleted, or not the caller's to read), as Parse Server leaves it out.
    public var included: [String: [String: [UInt8]]] = [:]

    /// An encoder whose file URLs are `publicURL/bucket/key`, or `assetURL/key` when an asset base
    /// URL (`public_asset_url`, a CDN in front of the bucket) is given; with a signer, each carries
    /// the signed path segment of the window `now` falls in (`AssetURLSigner`).
    public init(
        publicURL: String, bucket: String, assetURL: String = "", signer: AssetURLSigner? = nil, now: Date = Date()
    ) {
        var base = publicURL
        while base.hasSuffix("/") { base.removeLast() }
        self.publicURL = base
        self.bucket = bucket
        var asset = assetURL
        while asset.hasSuffix("/") { asset.removeLast() }
        self.files = ParseFileURLs(
            prefix: asset.isEmpty ? base + "/" + bucket + "/" : asset + "/", signer: signer,
            expires: signer?.expires(at: Int64(now.timeIntervalSince1970)) ?? 0)
    }

    /// `{"results":[…]}` (plus `"count":N` when `count` is given) for a query's rows.
    public func findResponse<Row: ParseRowSource>(_ rows: [Row], projection: ParseProjection, count: Int64? = nil)
        throws -> [UInt8]
    {
        var writer = ParseJSONWriter(capacity: 64 + rows.count * 700)
        writer.beginObject()
        writer.key(ascii: "results")
        writer.beginArray()
        if let first = rows.first {
            // Every row of a result has the same columns: find them once for the page.
            let columns = ResolvedColumns(projection, in: first)
            for row in rows {
                try write(row, projection: projection, columns: columns, into: &writer, asIncluded: false)
            }
        }
        writer.endArray()
        if let count {
            writer.key(ascii: "count")
            writer.int(count)
        }
        writer.endObject()
        return writer.bytes
    }

    /// One object, as `GET /classes/<Class>/<id>` returns it.
    public func object<Row: ParseRowSource>(_ row: Row, projection: ParseProjection) throws -> [UInt8] {
        var writer = ParseJSONWriter(capacity: 1024)
        try write(row, projection: projection, into: &writer, asIncluded: false)
        return writer.bytes
    }

    /// Writes one object for `row` (an included object gets `__type` and `className`).
    public func write<Row: ParseRowSource>(
        _ row: Row, projection: ParseProjection, into writer: inout ParseJSONWriter, asIncluded: Bool
    ) throws {
        try write(
            row, projection: projection, columns: ResolvedColumns(projection, in: row), into: &writer,
            asIncluded: asIncluded)
    }

    /// A projection's result columns found in a result (nil where the result lacks one).
    struct ResolvedColumns<Row: ParseRowSource> {
        let fields: [Row.Column?]
        let includes: [String: ResolvedColumns]
        let score: Row.Column?

        init(_ projection: ParseProjection, in row: Row) {
            fields = projection.resultColumns.map { row.column(named: $0) }
            includes = projection.includes.mapValues { ResolvedColumns($0, in: row) }
            score = projection.includesScore ? row.column(named: "score") : nil
        }
    }

    private func write<Row: ParseRowSource>(
        _ row: Row, projection: ParseProjection, columns: ResolvedColumns<Row>, into writer: inout ParseJSONWriter,
        asIncluded: Bool
    ) throws {
        writer.beginObject()
        if asIncluded {
            writer.key(ascii: "__type")
            writer.string(ascii: "Object")
            writer.key(ascii: "className")
            writer.string(projection.schema.className)
        }
        for (index, field) in projection.fields.enumerated() {
            guard let column = columns.fields[index] else { continue }
            if case .displaySizes = field.source {
                _ = try row.withText(column) { text in writeSizes(String(decoding: text, as: UTF8.self), into: &writer)
                }
                continue
            }
            switch field.type {
            case .string, .int, .double, .bool, .date, .stringArray:
                try row.writePlainValue(
                    column, type: field.type, as: field.jsonKey, isoDate: field.isBuiltInDate, into: &writer)
            case .acl, .json:
                // jsonb's own text, a JSON object the server normalized on write.
                _ = try row.withText(column) { json in
                    writer.key(json: field.jsonKey)
                    writer.raw(utf8: json)
                }
            case .file:
                let files = self.files  // the closure captures this one reference, not the encoder
                _ = try row.withText(column) { key in
                    writer.key(json: field.jsonKey)
                    files.writeFile(key: key, into: &writer)
                }
            case .pointer(let className):
                if let included = projection.includes[field.name], let includedColumns = columns.includes[field.name] {
                    guard let idColumn = includedColumns.fields.first ?? nil, try row.string(idColumn) != nil else {
                        continue
                    }
                    writer.key(field.name)
                    try write(row, projection: included, columns: includedColumns, into: &writer, asIncluded: true)
                } else {
                    guard let objectId = try row.string(column) else { continue }
                    if projection.columnPrefix.isEmpty, let fetched = included[field.name] {
                        guard let object = fetched[objectId] else { continue }
                        writer.key(json: field.jsonKey)
                        writer.raw(object)
                        continue
                    }
                    writer.key(json: field.jsonKey)
                    writer.beginObject(type: "Pointer")
                    writer.key(ascii: "className")
                    writer.string(className)
                    writer.key(ascii: "objectId")
                    writer.string(objectId)
                    writer.endObject()
                }
            }
        }
        for name in projection.relations {
            guard let relation = projection.schema.relations[name] else { continue }
            writer.key(name)
            writer.beginObject(type: "Relation")
            writer.key(ascii: "className")
            writer.string(relation.targetClass)
            writer.endObject()
        }
        if let scoreColumn = columns.score, let score = try row.double(scoreColumn) {
            writer.key(ascii: "score")
            writer.double(score)
        }
        writer.endObject()
    }

    /// The absolute URL of a blob key (`publicURL/bucket/key`, unsafe bytes percent-encoded), with
    /// a signer `publicURL/bucket/s/<expires>/<signature>/key` (`AssetURLSigner`).
    public func url(forKey key: String) -> String { files.url(forKey: key) }
}
