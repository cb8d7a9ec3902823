import Foundation

/// One comparable value, as `where` constraints and changed rows both reduce to it: Parse
/// strings (also pointers' objectIds and file names), numbers, dates (milliseconds) and booleans.
enum LiveQueryValue: Equatable {
    case string(String)
    case number(Double)
    case date(Int64)
    case bool(Bool)

    /// The order of two values of the same kind, nil for different kinds or booleans.
    static func compare(_ a: LiveQueryValue, _ b: LiveQueryValue) -> Int? {
        switch (a, b) {
        case (.number(let x), .number(let y)): return x < y ? -1 : x > y ? 1 : 0
        case (.date(let x), .date(let y)): return x < y ? -1 : x > y ? 1 : 0
        case (.string(let x), .string(let y)): return x < y ? -1 : x > y ? 1 : 0
        default: return nil
        }
    }

    /// The values a row column holds (none for null; each element of a string array).
    static func values(of raw: Any?, type: ParseFieldType) -> [LiveQueryValue] {
        guard let raw, !(raw is NSNull) else { return [] }
        switch type {
        case .string, .file, .pointer:
            return (raw as? String).map { [.string($0)] } ?? []
        case .int, .double:
            return (raw as? NSNumber).map { [.number($0.doubleValue)] } ?? []
        case .date:
            return (raw as? String).flatMap(ParseDate.parseMilliseconds).map { [.date($0)] } ?? []
        case .bool:
            return (raw as? Bool).map { [.bool($0)] } ?? []
        case .stringArray:
            return (raw as? [Any])?.compactMap { ($0 as? String).map(LiveQueryValue.string) } ?? []
        case .acl, .json:
            return []  // not queryable
        }
    }

    /// A constraint's operand for a field of `type`: a literal, `{"__type":"Date"}` or a Pointer.
    static func operand(_ json: Any, type: ParseFieldType, field: String) throws -> LiveQueryValue {
        switch type {
        case .string, .file, .stringArray:
            if let text = json as? String { return .string(text) }
        case .pointer:
            if let object = json as? [String: Any], object["__type"] as? String == "Pointer",
                let id = object["objectId"] as? String
            {
                return .string(id)
            }
            if let id = json as? String { return .string(id) }
        case .int, .double:
            if let number = json as? NSNumber, !Self.isJSONBoolean(json) { return .number(number.doubleValue) }
        case .date:
            if let object = json as? [String: Any], object["__type"] as? String == "Date",
                let iso = object["iso"] as? String,
                let ms = ParseDate.parseMilliseconds(iso)
            {
                return .date(ms)
            }
            if let iso = json as? String, let ms = ParseDate.parseMilliseconds(iso) { return .date(ms) }
        case .bool:
            if Self.isJSONBoolean(json), let flag = json as? Bool { return .bool(flag) }
        case .acl, .json:
            break
        }
        throw LiveQueryError.invalidQuery("bad value for key \(field)")
    }
}

extension LiveQueryValue {
    /// Whether a value from `JSONSerialization` was a JSON `true`/`false`. `is Bool` cannot tell: on
    /// Linux every `NSNumber` holding 0 or 1 casts to `Bool`, so a `where` of `{"$gt":1}` would read
    /// as a boolean. A JSON boolean is an `NSNumber` of the C type `char` ("c"); JSON numbers never are.
    static func isJSONBoolean(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return value is Bool }
        return String(cString: number.objCType) == "c"
    }
}
