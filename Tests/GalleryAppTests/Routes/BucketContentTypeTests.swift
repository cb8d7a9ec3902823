import BlobStore
import Testing

@testable import GalleryApp

/// `BucketRoutes.contentType(for:)`: the type a bucket answer names, by the key's extension, which
/// it reads as the key's last bytes packed into a word (decision 041, round 9).
@Suite struct BucketContentTypeTests {
    func type(_ key: String) throws -> String { BucketRoutes.contentType(for: try BlobKey(key)) }

    @Test func everyKnownExtension_InAnyCase_NamesItsType() throws {
        let expected: [(String, String)] = [
            ("thumbnails/p1.jpg", "image/jpeg"), ("originals/ab/cd.JPEG", "image/jpeg"), ("a.JpG", "image/jpeg"),
            ("sizes/p/s.png", "image/png"), ("x.PNG", "image/png"), ("a.webp", "image/webp"),
            ("a.WebP", "image/webp"), ("b.heic", "image/heic"), ("b.HEIF", "image/heic"), ("c.avif", "image/avif"),
            ("a.jpg", "image/jpeg"), ("a.jpeg", "image/jpeg"),
        ]
        for (key, contentType) in expected { #expect(try type(key) == contentType, "\(key)") }
    }

    @Test func anythingElse_IsOctetStream() throws {
        for key in [
            "a", "ab", "jpg", "a.jpgx", "a.jpe", "ajpeg", "a.pn", "a.gif", "a.jp-g", "photo.heics", "x.av1f",
            "dir.jpg/file", "a.webq", "a_png",
        ] {
            #expect(try type(key) == "application/octet-stream", "\(key)")
        }
    }

    @Test func theWordPacksTheLastFiveBytes_LettersLowercased() {
        let word = Array("ab.JPEG".utf8).withUnsafeBufferPointer(BucketRoutes.lowercasedTail)
        #expect(word == Array(".jpeg".utf8).reduce(0) { $0 << 8 | UInt64($1) })
        #expect(Array("".utf8).withUnsafeBufferPointer(BucketRoutes.lowercasedTail) == 0)
    }
}
