import Foundation

/// The header names clients send on nearly every request, spelled as they send them: a parsed
/// name that is one of them, byte for byte, is that string literal, rather than a new string
/// validated and copied from the buffer for each request (decision 041). Names stay as received:
/// another spelling (`HOST`) is made from its bytes as before.
enum HTTPFieldNames {
    /// A common name as bytes to compare and as the string to hand out.
    private struct Entry {
        let bytes: StaticString
        let name: String
    }

    /// The entries by length (index = bytes).
    private static let byLength: [[Entry]] = {
        let names: [(StaticString, String)] = [
            ("Host", "Host"), ("User-Agent", "User-Agent"), ("Accept", "Accept"),
            ("Accept-Encoding", "Accept-Encoding"), ("Accept-Language", "Accept-Language"),
            ("Connection", "Connection"), ("Content-Type", "Content-Type"), ("Content-Length", "Content-Length"),
            ("If-None-Match", "If-None-Match"), ("If-Modified-Since", "If-Modified-Since"), ("Range", "Range"),
            ("Origin", "Origin"), ("Referer", "Referer"), ("Cookie", "Cookie"), ("Authorization", "Authorization"),
            ("Cache-Control", "Cache-Control"), ("X-Parse-Application-Id", "X-Parse-Application-Id"),
            ("X-Parse-Session-Token", "X-Parse-Session-Token"), ("X-Parse-Master-Key", "X-Parse-Master-Key"),
            ("X-Parse-REST-API-Key", "X-Parse-REST-API-Key"), ("host", "host"), ("user-agent", "user-agent"),
            ("accept", "accept"), ("accept-encoding", "accept-encoding"),
        ]
        var table = [[Entry]](repeating: [], count: 32)
        for (bytes, name) in names { table[bytes.utf8CodeUnitCount].append(Entry(bytes: bytes, name: name)) }
        return table
    }()

    /// The name in `bytes` as a string: a literal when it is one of the common names, else new.
    static func name(_ bytes: UnsafeRawBufferPointer) -> String {
        let count = bytes.count
        if count < byLength.count, let base = bytes.baseAddress {
            // Read in place: no copy of the length's list nor of its entries.
            let common = byLength[count].withUnsafeBufferPointer { entries -> String? in
                for entry in entries where memcmp(base, entry.bytes.utf8Start, count) == 0 { return entry.name }
                return nil
            }
            if let common { return common }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
