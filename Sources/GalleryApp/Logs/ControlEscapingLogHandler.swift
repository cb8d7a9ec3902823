import Logging

/// Wraps the app log's handler so that no field can break a line: control characters (below
/// 0x20, and 0x7F) and the backslash in the message and in every metadata value become `\xNN`,
/// as the access log writes them. Request paths (`%0A` decodes to a newline), LiveQuery ops and
/// client-sent names reach the log through metadata; without this, one request could forge lines.
public struct ControlEscapingLogHandler: LogHandler {
    private var inner: any LogHandler

    /// `inner` writes what this handler has escaped.
    public init(wrapping inner: any LogHandler) {
        self.inner = inner
    }

    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue.mapValues(Self.escape) }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue.map(Self.escape) }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: Self.escape(event.message.description))
        event.metadata = event.metadata?.mapValues(Self.escape)
        inner.log(event: event)
    }

    /// A metadata value with every string in it escaped (a value that only describes itself
    /// becomes the escaped string of its description).
    static func escape(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): return .string(escape(text))
        case .stringConvertible(let value): return .string(escape(value.description))
        case .dictionary(let members): return .dictionary(members.mapValues(escape))
        case .array(let elements): return .array(elements.map(escape))
        }
    }

    /// `text` with control characters and `\` as `\xNN`; unchanged (not copied) when it has none.
    static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: needsEscape) else { return text }
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            if needsEscape(byte) {
                out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\\")
    }
}
