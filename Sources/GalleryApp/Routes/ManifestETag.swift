import Crypto
import Foundation

/// The entity tag of a find or count answer (`GET /classes/<Class>`): a digest of the change
/// sequences of what the answer reads (for a user, of their own photos or the galleries they may
/// read: `ClassChangeSequences.dependencies(of:for:)`), the request's normalized query, the keys' access
/// level, the caller (`ParseAccess.tagKey`: one user's tag never validates another's answer) and
/// the public URL the records' file URLs start with. The same tag means the same answer; a change
/// to anything read, or another query, access level or caller, gives another tag.
///
/// The tag is weak (RFC 9110 §8.8.1): the server may gzip the answer, and both codings carry it.
enum ManifestETag {
    /// `W/"<32 hex digits>"`.
    static func make(
        sequences: [Int64], className: String, items: [(name: String, value: String)], access: Int, publicURL: String,
        caller: String = ""
    ) -> String {
        // The query's parameters sorted: the same query in any parameter order has the same tag.
        make(
            sequences: sequences, className: className, normalizedItems: normalized(items), access: access,
            publicURL: publicURL, caller: caller)
    }

    /// `make` for parameters already in `normalized` order (as `ManifestCache` keeps them).
    static func make(
        sequences: [Int64], className: String, normalizedItems: [(name: String, value: String)], access: Int,
        publicURL: String, caller: String
    ) -> String {
        var hasher = SHA256()
        var text = "v1\u{0}" + className + "\u{0}" + publicURL + "\u{0}\(access)\u{0}" + caller
        for seq in sequences { text += "\u{0}\(seq)" }
        hasher.update(data: Array(text.utf8))
        for item in normalizedItems {
            hasher.update(data: Array(("\u{1}" + item.name + "\u{0}" + item.value).utf8))
        }
        // Hex by table, not `String(format:)`: that was 32 Foundation format calls per find.
        let digits = Array("0123456789abcdef".utf8)
        var tag: [UInt8] = Array("W/\"".utf8)
        tag.reserveCapacity(35)
        for byte in hasher.finalize().prefix(16) {
            tag.append(digits[Int(byte >> 4)])
            tag.append(digits[Int(byte & 0x0F)])
        }
        tag.append(UInt8(ascii: "\""))
        return String(decoding: tag, as: UTF8.self)
    }

    /// The query parameters in a canonical order (by name, then value).
    static func normalized(_ items: [(name: String, value: String)]) -> [(name: String, value: String)] {
        items.sorted { $0.name != $1.name ? $0.name < $1.name : $0.value < $1.value }
    }

    /// Whether an `If-None-Match` field value names `tag` (RFC 9110 §13.1.2): `*`, or a list of
    /// entity-tags, strong or weak, compared weakly (§8.8.3.2: opaque parts equal, `W/` ignored).
    /// A malformed member matches nothing; the members around it still count.
    static func ifNoneMatch(_ field: String, matches tag: String) -> Bool {
        ifNoneMatch(field, opaque: opaque(tag))
    }

    /// `ifNoneMatch(_:matches:)` for a tag's opaque part as bytes (`opaque(_:)`, made once per tag):
    /// compares UTF-8 bytes in place, the whole field first (a client sends back the one tag it got).
    static func ifNoneMatch(_ field: String, opaque target: [UInt8]) -> Bool {
        if let found = field.utf8.withContiguousStorageIfAvailable({ list($0, names: target) }) { return found }
        return Array(field.utf8).withUnsafeBufferPointer { list($0, names: target) }
    }

    /// The quoted part of an entity-tag, without `W/`, as bytes.
    static func opaque(_ tag: String) -> [UInt8] {
        let bytes = Array(tag.utf8)
        return bytes.starts(with: weakPrefix) ? Array(bytes.dropFirst(2)) : bytes
    }

    private static let weakPrefix: [UInt8] = [UInt8(ascii: "W"), UInt8(ascii: "/")]

    private static func list(_ field: UnsafeBufferPointer<UInt8>, names target: [UInt8]) -> Bool {
        let quote = UInt8(ascii: "\"")
        let comma = UInt8(ascii: ",")
        let n = field.count
        // The usual field: exactly the tag as it was sent, weak prefix and all.
        if n == target.count + 2, field[0] == UInt8(ascii: "W"), field[1] == UInt8(ascii: "/"),
            equal(field, from: 2, target)
        {
            return true
        }
        var i = 0
        while true {
            while i < n && (field[i] == 0x20 || field[i] == 0x09 || field[i] == comma) { i += 1 }
            if i == n { return false }
            if field[i] == UInt8(ascii: "*") { return true }
            var start = i
            if n - start >= 2 && field[start] == UInt8(ascii: "W") && field[start + 1] == UInt8(ascii: "/") {
                start += 2
            }
            // entity-tag = [ weak ] opaque-tag; opaque-tag = DQUOTE *etagc DQUOTE (§8.8.3).
            if start < n && field[start] == quote, let close = index(of: quote, in: field, from: start + 1) {
                if close + 1 - start == target.count && equal(field, from: start, target) { return true }
                i = close + 1
            } else {
                // Not an entity-tag: skip to the next list member.
                guard let next = index(of: comma, in: field, from: i) else { return false }
                i = next + 1
            }
        }
    }

    private static func index(of byte: UInt8, in field: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        while i < field.count {
            if field[i] == byte { return i }
            i += 1
        }
        return nil
    }

    /// Whether `field` holds `target` at `start` (the caller checked there is room).
    private static func equal(_ field: UnsafeBufferPointer<UInt8>, from start: Int, _ target: [UInt8]) -> Bool {
        guard field.count - start >= target.count else { return false }
        for k in 0..<target.count where field[start + k] != target[k] { return false }
        return true
    }
}
