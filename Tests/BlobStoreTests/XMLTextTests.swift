import Foundation
import Testing

@testable import BlobStore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The one XML escaper (S3 request bodies, the bucket's error documents, Flickr's XML answers).
@Suite struct XMLTextTests {
    @Test func escaped_LeavesPlainTextAlone() {
        #expect(XMLText.escaped("originals/ab12cd34.jpg") == "originals/ab12cd34.jpg")
        #expect(XMLText.escaped("Été à Zürich 🌅") == "Été à Zürich 🌅")
        #expect(XMLText.escaped("") == "")
    }

    @Test func escaped_WritesTheFiveEntities_AndLineBreaksAsReferences() {
        #expect(XMLText.escaped(#"<b>"x" & 'y'</b>"#) == "&lt;b&gt;&quot;x&quot; &amp; &apos;y&apos;&lt;/b&gt;")
        #expect(XMLText.escaped("a\nb\rc\td") == "a&#10;b&#13;c&#9;d")
    }

    @Test func escaped_ReplacesWhatXMLCannotCarry_WithTheReplacementCharacter() {
        #expect(XMLText.escaped("a\u{1}b\u{1F}c") == "a\u{FFFD}b\u{FFFD}c")
        #expect(XMLText.escaped("a\u{FFFE}b\u{FFFF}c") == "a\u{FFFD}b\u{FFFD}c")
        // U+FFFD itself and other scalars led by 0xEF pass through.
        #expect(XMLText.escaped("\u{FFFD}\u{F8FF}") == "\u{FFFD}\u{F8FF}")
    }

    @Test func escaped_AlwaysGivesAWellFormedDocument_ThatReadsBackTheText() throws {
        let inputs = ["plain", #"<&>"'"#, "line\nbreak", "tab\there", "ctl\u{7}x", "\u{FFFF}"]
        for input in inputs {
            let xml = "<?xml version=\"1.0\"?><r a=\"\(XMLText.escaped(input))\">\(XMLText.escaped(input))</r>"
            let reader = AttributeReader()
            let parser = XMLParser(data: Data(xml.utf8))
            parser.delegate = reader
            #expect(parser.parse(), "\(xml)")
            let expected = String(
                String.UnicodeScalarView(
                    input.unicodeScalars.map { scalar in
                        let banned = scalar.value < 0x20 && !["\n", "\r", "\t"].contains(scalar)
                        return banned || scalar.value == 0xFFFE || scalar.value == 0xFFFF ? "\u{FFFD}" : scalar
                    }))
            #expect(reader.attribute == expected, "\(xml)")
            #expect(reader.text == expected, "\(xml)")
        }
    }
}

/// Collects the root's `a` attribute and its text.
private final class AttributeReader: NSObject, XMLParserDelegate {
    var attribute: String?
    var text = ""

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        attribute = attributes["a"]
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
}
