import Testing

@testable import GalleryApp

/// `ManifestETag`: the tag's inputs, and `If-None-Match` lists as RFC 9110 §13.1.2 reads them.
@Suite struct ManifestETagTests {
    let tag = ManifestETag.make(
        sequences: [7], className: "Photo", items: [("limit", "10"), ("order", "-createdAt")], access: 1,
        publicURL: "http://example.test")

    @Test func make_GivesAWeakTag_IndependentOfParameterOrder() {
        #expect(tag.hasPrefix("W/\"") && tag.hasSuffix("\"") && tag.count == 36)
        let reordered = ManifestETag.make(
            sequences: [7], className: "Photo", items: [("order", "-createdAt"), ("limit", "10")], access: 1,
            publicURL: "http://example.test")
        #expect(reordered == tag)
    }

    @Test func make_GivesAnotherTag_WhenAnyInputDiffers() {
        let variants = [
            ManifestETag.make(
                sequences: [8], className: "Photo", items: [("limit", "10"), ("order", "-createdAt")], access: 1,
                publicURL: "http://example.test"),
            ManifestETag.make(
                sequences: [7], className: "Gallery", items: [("limit", "10"), ("order", "-createdAt")], access: 1,
                publicURL: "http://example.test"),
            ManifestETag.make(
                sequences: [7], className: "Photo", items: [("limit", "11"), ("order", "-createdAt")], access: 1,
                publicURL: "http://example.test"),
            ManifestETag.make(
                sequences: [7], className: "Photo", items: [("limit", "10")], access: 1,
                publicURL: "http://example.test"),
            ManifestETag.make(
                sequences: [7], className: "Photo", items: [("limit", "10"), ("order", "-createdAt")], access: 2,
                publicURL: "http://example.test"),
            ManifestETag.make(
                sequences: [7], className: "Photo", items: [("limit", "10"), ("order", "-createdAt")], access: 1,
                publicURL: "http://other.test"),
            // Names and values cannot run into each other.
            ManifestETag.make(
                sequences: [7], className: "Photo", items: [("limit", "10order"), ("", "-createdAt")], access: 1,
                publicURL: "http://example.test"),
        ]
        #expect(Set(variants + [tag]).count == variants.count + 1)
    }

    @Test func ifNoneMatch_ComparesWeakly_InListsOfTags() {
        let strong = String(tag.dropFirst(2))
        let matching = [
            tag, strong, "*", " *", "\"x\", " + tag, "\"x\",\(strong)", "W/\"x\" ,\t\(tag) , \"y\"",
            // A malformed member is skipped; the members after it still count.
            "garbage, " + tag, "W/x, " + strong,
        ]
        for field in matching { #expect(ManifestETag.ifNoneMatch(field, matches: tag), "\(field)") }
        let other = [
            "", ",", "\"x\"", "W/\"x\", \"y\"", String(tag.dropLast(2)) + "\"", "W/" + tag, "garbage",
            String(strong.dropLast()), "\"" + strong,
        ]
        for field in other { #expect(!ManifestETag.ifNoneMatch(field, matches: tag), "\(field)") }
    }

    @Test func ifNoneMatch_ComparesBytes_OfTheOpaquePart() {
        let opaque = ManifestETag.opaque(tag)
        #expect(opaque == Array(tag.utf8.dropFirst(2)))
        #expect(ManifestETag.opaque("\"strong\"") == Array("\"strong\"".utf8))
        // Bytes, not characters: a precomposed and a decomposed é are different tags.
        let precomposed = "W/\"caf\u{E9}\""
        let decomposed = "W/\"cafe\u{301}\""
        #expect(ManifestETag.ifNoneMatch(precomposed, matches: precomposed))
        #expect(!ManifestETag.ifNoneMatch(decomposed, matches: precomposed))
        #expect(ManifestETag.ifNoneMatch("\"\u{1F600}\", " + tag, opaque: opaque))
        // A member that does not start as an entity-tag does not name it.
        #expect(!ManifestETag.ifNoneMatch("x" + tag, opaque: opaque))
        #expect(!ManifestETag.ifNoneMatch("x" + String(tag.dropFirst(2)), opaque: opaque))
        #expect(!ManifestETag.ifNoneMatch("W/", opaque: opaque))
        #expect(!ManifestETag.ifNoneMatch("\"", opaque: opaque))
    }
}
