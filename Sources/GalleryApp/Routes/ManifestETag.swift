import Crypto
import Foundation

/// The entity tag of a find or count answer (`GET /classes/<Class>`): a digest of the change
/// sequences of the classes the answer reads, the request's normalized query, the keys' access
/// level, the caller (`ParseAccess.tagKey`: one user's tag never validates another's answer) and
/// the public URL the records' file URLs start with. The same tag means the same answer; a change
/// to any class read, or another query, access level or caller, gives another tag.
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
        let target = opaque(tag)
        var rest = Substring(field)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            if rest.isEmpty { return false }
            if rest.first == "*" { return true }
            var candidate = rest
            if candidate.hasPrefix("W/") { candidate = candidate.dropFirst(2) }
            // entity-tag = [ weak ] opaque-tag; opaque-tag = DQUOTE *etagc DQUOTE (§8.8.3).
            if candidate.first == "\"", let close = candidate.dropFirst().firstIndex(of: "\"") {
                if candidate[candidate.startIndex...close] == target { return true }
                rest = candidate[candidate.index(after: close)...]
            } else {
                // Not an entity-tag: skip to the next list member.
                guard let comma = rest.firstIndex(of: ",") else { return false }
                rest = rest[rest.index(after: comma)...]
            }
        }
    }

    /// The quoted part of an entity-tag, without `W/`.
    private static func opaque(_ tag: String) -> Substring {
        tag.hasPrefix("W/") ? Substring(tag).dropFirst(2) : Substring(tag)
    }
}
