import Foundation
import TOMLKit

/// A config file read with TOMLKit (toml++): the whole of TOML 1.0, so comments, multi-line and
/// literal strings, `_` in integers and the rest behave as any TOML tool expects. galleryd's
/// settings are top-level keys; a table, an array or a date where a setting is expected is an
/// error naming the key, never silently ignored.
enum ConfigurationFile {
    /// One setting as the file gives it: its key, the value as text (what an environment variable
    /// would say), and the line it is on.
    struct Entry: Equatable {
        /// The setting's key (`snake_case`).
        let key: String
        /// The value as text: a string's contents, an integer's digits, `true`/`false`.
        let value: String
        /// The 1-based line the key is on.
        let line: Int
    }

    /// The top-level entries of `text`, in file order.
    static func parse(_ text: String, file: String) throws -> [Entry] {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationError.syntax(file: file, line: error.source.begin.line, reason: error.description)
        }
        var entries: [Entry] = []
        // `[[views]]` is read whole by `ViewDefinition`.
        for key in table.keys where key != ViewDefinition.key {
            let line = Self.line(of: key, in: text)
            guard let value = table[key]?.tomlValue else { continue }
            let textValue: String
            switch value.type {
            case .string: textValue = value.string ?? ""
            case .int: textValue = value.int.map { String($0) } ?? ""
            case .bool: textValue = value.bool.map { $0 ? "true" : "false" } ?? ""
            case .double: textValue = value.double.map { String($0) } ?? ""
            case .table:
                guard ConfigurationKey.named(key) != nil else {
                    throw ConfigurationError.unknownKey(key: key, file: file, line: line)
                }
                throw ConfigurationError.syntax(
                    file: file, line: line, reason: "\(key) is a table; galleryd's settings are top-level keys")
            case .array, .date, .time, .dateTime:
                guard ConfigurationKey.named(key) != nil else {
                    throw ConfigurationError.unknownKey(key: key, file: file, line: line)
                }
                throw ConfigurationError.invalidValue(
                    key: key, value: value.debugDescription, reason: "expected a string, an integer or a boolean")
            }
            entries.append(Entry(key: key, value: textValue, line: line))
        }
        return entries.sorted { $0.line < $1.line }
    }

    /// The line where `key` is set (`key =`, `"key" =`, or `[key]`), for messages; 0 when not found.
    /// TOMLKit reports positions for syntax errors only, and a settings file is small.
    static func line(of key: String, in text: String) -> Int {
        let forms = [key, "\"\(key)\"", "'\(key)'"]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            for form in forms where line.hasPrefix(form) {
                let rest = line.dropFirst(form.count).drop { $0 == " " || $0 == "\t" }
                if rest.hasPrefix("=") { return index + 1 }
            }
            if line.hasPrefix("[") {
                let name = line.drop { $0 == "[" }.prefix { $0 != "]" && $0 != "." }.trimmingCharacters(
                    in: .whitespaces)
                if forms.contains(name) { return index + 1 }
            }
        }
        return 0
    }

    /// `value` as a TOML basic string, quotes included (what `check-config` prints).
    static func quote(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += String(format: "\\u%04X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
