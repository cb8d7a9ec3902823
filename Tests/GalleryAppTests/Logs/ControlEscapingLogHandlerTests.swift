import Foundation
import Logging
import Testing

@testable import GalleryApp

/// The app log's fields cannot forge lines: control characters become `\xNN`.
@Suite struct ControlEscapingLogHandlerTests {
    @Test func messageAndEveryMetadataValue_AreEscaped_SoOneEventIsOneLine() {
        let capture = CapturingLogHandler()
        var logger = Logger(label: "test") { _ in ControlEscapingLogHandler(wrapping: capture) }
        logger[metadataKey: "peer"] = "10.0.0.1\r\nforged"
        // What a request for `/parse/classes/x%0A2026-11-26T00:00:00Z info: admin logged in` logs.
        logger.notice(
            "refused \u{1B}[31m",
            metadata: [
                "path": "/parse/classes/x\n2026-11-26T00:00:00Z info: admin logged in",
                "op": .stringConvertible("sub\u{7F}scribe\tnow"),
                "nested": ["list": ["a\nb", "c\\x0a"]],
            ])
        let lines = capture.lines
        #expect(lines.count == 1)
        let line = lines.first ?? ""
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(line)")
        #expect(line.contains("refused \\x1b[31m"))
        #expect(line.contains("path=/parse/classes/x\\x0a2026-11-26T00:00:00Z info: admin logged in"))
        #expect(line.contains("op=sub\\x7fscribe\\x09now"))
        // Nested values too; a literal backslash cannot pose as an escape.
        let nested = ControlEscapingLogHandler.escape(["list": ["a\nb", "c\\x0a"]])
        #expect(nested == ["list": ["a\\x0ab", "c\\x5cx0a"]])
        #expect(line.contains("peer=10.0.0.1\\x0d\\x0aforged"))
        // Plain text passes unchanged.
        #expect(ControlEscapingLogHandler.escape("/parse/classes/Photo?limit=1") == "/parse/classes/Photo?limit=1")
    }
}
