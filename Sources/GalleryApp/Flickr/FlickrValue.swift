import BlobStore

/// A value of a Flickr answer, written once and rendered as JSON or as Flickr's XML (`format=rest`).
///
/// Flickr's JSON is its XML read mechanically: an element is an object whose scalar attributes are
/// keys, a repeated child element is an array under the child's name, and an element's text is
/// `_content`. So an `.object` entry holding a scalar is an XML attribute, one holding an object or
/// list is a child element (a list: one element per item, all named after the entry), and the entry
/// `_content` is the element's text.
enum FlickrValue: Sendable {
    /// A string (JSON string; XML attribute or text).
    case string(String)
    /// A number (JSON number; XML attribute).
    case int(Int)
    /// An element: ordered entries.
    case object([Entry])
    /// Repeated elements named after the entry that holds the list.
    case list([FlickrValue])

    /// One named entry of an object.
    typealias Entry = (name: String, value: FlickrValue)

    /// The key of an element's text.
    static let content = "_content"

    /// `{"_content": text}`: an element holding only text (`<title>…</title>`).
    static func text(_ text: String) -> FlickrValue { .object([(content, .string(text))]) }

    /// JSON text of the value.
    func json(into out: inout String) {
        switch self {
        case .string(let text):
            Self.appendJSONString(text, to: &out)
        case .int(let number):
            out += String(number)
        case .object(let entries):
            out += "{"
            for (index, entry) in entries.enumerated() {
                if index > 0 { out += "," }
                Self.appendJSONString(entry.name, to: &out)
                out += ":"
                entry.value.json(into: &out)
            }
            out += "}"
        case .list(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.json(into: &out)
            }
            out += "]"
        }
    }

    /// XML of the value as the element (or elements, for a list) named `name`.
    func xml(named name: String, into out: inout String) {
        switch self {
        case .string(let text):
            out += "<\(name)>" + XMLText.escaped(text) + "</\(name)>"
        case .int(let number):
            out += "<\(name)>\(number)</\(name)>"
        case .list(let items):
            for item in items { item.xml(named: name, into: &out) }
        case .object(let entries):
            out += "<" + name
            var children = ""
            var text = ""
            for entry in entries {
                switch entry.value {
                case .string(let value) where entry.name == Self.content:
                    text = XMLText.escaped(value)
                case .string(let value):
                    out += " \(entry.name)=\"" + XMLText.escaped(value) + "\""
                case .int(let value):
                    out += " \(entry.name)=\"\(value)\""
                case .object, .list:
                    entry.value.xml(named: entry.name, into: &children)
                }
            }
            if children.isEmpty && text.isEmpty {
                out += " />"
            } else {
                out += ">" + text + children + "</\(name)>"
            }
        }
    }

    /// `text` as a JSON string literal (RFC 8259 §7), appended.
    static func appendJSONString(_ text: String, to out: inout String) {
        out += "\""
        // Most strings (ids, URLs, titles) need no escape: appended whole, not scalar by scalar.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0xE2 }) {
            out += text
            out += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // U+2028/2029 end a line in JavaScript: escaped, so a `jsonFlickrApi(…)` answer stays valid JS.
            case "\u{2028}", "\u{2029}": out += "\\u" + String(scalar.value, radix: 16)
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
