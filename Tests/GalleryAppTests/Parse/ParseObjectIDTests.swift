import Testing

@testable import GalleryApp

/// objectId generation.
@Suite struct ParseObjectIDTests {
    @Test func objectId_Has10AlphanumericCharacters() {
        var seen: Set<String> = []
        for _ in 0..<1000 {
            let id = ParseObjectID.generate()
            #expect(id.utf8.count == 10)
            #expect(ParseObjectID.isPlausible(id))
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }

    @Test func objectId_UsesTheWholeAlphabet() {
        var characters: Set<Character> = []
        for _ in 0..<500 { characters.formUnion(ParseObjectID.generate()) }
        #expect(characters.count == 62)
    }

    @Test func objectId_PlausibilityRejectsHostileText() {
        for text in ["", "a b", "a'", String(repeating: "a", count: 33), "é", "a-b"] {
            #expect(!ParseObjectID.isPlausible(text), "\(text)")
        }
    }
}
