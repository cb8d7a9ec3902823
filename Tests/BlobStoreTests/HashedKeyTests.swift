import Foundation
import Testing

@testable import BlobStore

/// `HashedKey`: a key owned or borrowed as bytes, equal and hashed alike when the bytes are, so a
/// probe over a request path's bytes finds what was stored under a String (decision 041, round 9).
@Suite struct HashedKeyTests {
    @Test func aProbe_FindsTheKeyStoredUnderTheSameBytes_AndOnlyThat() {
        let table: [HashedKey: Int] = [HashedKey("thumbnails/a.jpg"): 1, HashedKey("thumbnails/b.jpg"): 2]
        let path = Array("/bucket/thumbnails/a.jpg".utf8)
        path.withUnsafeBufferPointer { path in
            let key = UnsafeBufferPointer(rebasing: path[8...])
            HashedKey.probe(key) { probe in
                #expect(probe.text == nil)
                #expect(probe.string == "thumbnails/a.jpg")
                #expect(table[probe] == 1)
                #expect(probe == HashedKey("thumbnails/a.jpg"))
                #expect(probe.hashValue == HashedKey("thumbnails/a.jpg").hashValue)
                #expect(probe != HashedKey("thumbnails/b.jpg"))
            }
            for other in [path[8..<23], path[9...], path[0...], path[8..<8]] {
                HashedKey.probe(UnsafeBufferPointer(rebasing: other)) { #expect(table[$0] == nil) }
            }
        }
    }

    @Test func keysAreEqual_ExactlyWhenTheirBytesAre() {
        #expect(HashedKey("a") == HashedKey("a"))
        #expect(HashedKey("") == HashedKey(""))
        #expect(HashedKey("a") != HashedKey("b"))
        #expect(HashedKey("ab") != HashedKey("a"))
        // Canonically equivalent text in other bytes is another key (blob keys are ASCII).
        #expect("\u{E9}" == "e\u{301}")
        #expect(HashedKey("\u{E9}") != HashedKey("e\u{301}"))
        #expect(HashedKey("\u{E9}").text == "\u{E9}")
        HashedKey("photos/x").withBytes { #expect(Array($0) == Array("photos/x".utf8)) }
    }
}
