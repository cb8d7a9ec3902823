import Foundation

/// Header fields of a response read off the wire, in order, names compared case-insensitively.
public struct RawHTTPHeaders: Sequence, Sendable {
    /// The fields as received.
    public private(set) var fields: [(name: String, value: String)] = []

    /// No fields.
    public init() {}

    /// The first value of `name`, nil when absent.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// Whether a field of that name is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Whether a comma-separated field (`Connection`, `Vary`) lists `token`, ignoring case,
    /// whitespace and `;` parameters.
    public func containsToken(_ token: String, in name: String) -> Bool {
        values(name).contains { value in
            value.split(separator: ",").contains { element in
                let bare = element.split(separator: ";", maxSplits: 1).first ?? ""
                return bare.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare(token) == .orderedSame
            }
        }
    }

    /// Appends a field.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// How many fields there are.
    public var count: Int { fields.count }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}
