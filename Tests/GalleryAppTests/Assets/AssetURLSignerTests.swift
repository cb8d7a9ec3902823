import Foundation
import GalleryTestSupport
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The signer alone: windows, canonical string, encoding.
@Suite struct AssetURLSignerTests {
    let signer = AssetURLSigner(
        key: "unit-test-signing-key-0123456789abcdef", bucket: "bucket", windowSeconds: 86_400, validitySeconds: 604_800
    )

    @Test func expiry_IsTheSameInsideAWindow_AndMovesOnInTheNext() {
        let start: Int64 = 1_800_000_000 / 86_400 * 86_400
        let first = signer.expires(at: start)
        #expect(first == start + 86_400 + 604_800)
        for t in [start, start + 1, start + 43_200, start + 86_399] {
            #expect(signer.expires(at: t) == first, "\(t)")
            #expect(signer.expires(at: t) - t >= 604_800, "valid at least the validity from \(t)")
            #expect(signer.expires(at: t) - t <= 604_800 + 86_400)
        }
        #expect(signer.expires(at: start + 86_400) == first + 86_400)
        // Same key, same window: byte-identical segments (from the cache or not); another window: another.
        let a = signer.pathSegment(forKey: "thumbnails/Ab3dE5fG7h.jpg", expires: signer.expires(at: start + 5))
        let b = signer.pathSegment(forKey: "thumbnails/Ab3dE5fG7h.jpg", expires: signer.expires(at: start + 80_000))
        let next = signer.pathSegment(forKey: "thumbnails/Ab3dE5fG7h.jpg", expires: signer.expires(at: start + 86_400))
        #expect(a == b)
        #expect(a != next)
        // After the cache moved on to the next window, the earlier window's segment is still the same bytes.
        #expect(signer.pathSegment(forKey: "thumbnails/Ab3dE5fG7h.jpg", expires: signer.expires(at: start)) == a)
    }

    @Test func encoder_SignsEveryFileURL_AlsoForACDN_AndTheyVerify() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_123)
        let encoder = ParseObjectEncoder(
            publicURL: "https://photos.example", bucket: "bucket", assetURL: "https://cdn.example.com/g/",
            signer: signer, now: now)
        let later = ParseObjectEncoder(
            publicURL: "https://photos.example", bucket: "bucket", assetURL: "https://cdn.example.com/g/",
            signer: signer,
            now: now.addingTimeInterval(60))
        let url = encoder.url(forKey: "thumbnails/AbCdEf1234.jpg")
        let expires = signer.expires(at: 1_800_000_123)
        #expect(url.hasPrefix("https://cdn.example.com/g/s/\(expires)/"))
        #expect(url.hasSuffix("/thumbnails/AbCdEf1234.jpg"))
        #expect(later.url(forKey: "thumbnails/AbCdEf1234.jpg") == url)
        let bytes = try encoder.object(ParseObjectEncoderTests.photoRow, projection: .all(.photo))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect((object["thumbnail"] as? [String: Any])?["url"] as? String == url)
        let original = try #require((object["original"] as? [String: Any])?["url"] as? String)
        let captured = String(original.dropFirst("https://cdn.example.com/g/".count))
        let verified = try signer.verify(captured: captured, query: nil, now: 1_800_000_123)
        #expect(verified.key == "originals/abc.jpg" && verified.expires == expires)
        #expect(AssetURLSigner.unsignedKey(captured: captured) == "originals/abc.jpg")
        #expect(AssetURLSigner.unsignedKey(captured: "originals/abc.jpg") == "originals/abc.jpg")
        let tampered = captured.replacingOccurrences(of: "abc.jpg", with: "abd.jpg")
        #expect(throws: AssetURLError.signatureMismatch) {
            try signer.verify(captured: tampered, query: nil, now: 1_800_000_123)
        }
        #expect(throws: AssetURLError.expired(expires)) {
            try signer.verify(captured: captured, query: nil, now: expires + 1)
        }
        #expect(throws: AssetURLError.missing) { try signer.verify(captured: "originals/abc.jpg", query: nil, now: 0) }
    }

    @Test func signature_IsHMACSHA256_OfTheDocumentedCanonicalString_Base64URL() {
        // RFC 4648 §10 vectors, base64url without padding.
        #expect(AssetURLSigner.base64URL(Array("foobar".utf8)) == Array("Zm9vYmFy".utf8))
        #expect(AssetURLSigner.base64URL(Array("fooba".utf8)) == Array("Zm9vYmE".utf8))
        #expect(AssetURLSigner.base64URL(Array("foob".utf8)) == Array("Zm9vYg".utf8))
        #expect(AssetURLSigner.base64URL([0xfb, 0xff]) == Array("-_8".utf8))
        // Computed independently: printf 'galleryd-asset-v1\n/bucket/thumbnails/x.jpg\n1800000000' |
        //   openssl dgst -sha256 -hmac unit-test-signing-key-0123456789abcdef -binary | basenc --base64url
        let signature = String(
            decoding: signer.signature(key: Array("thumbnails/x.jpg".utf8), expires: 1_800_000_000), as: UTF8.self)
        #expect(signature == Self.opensslSignature)
    }

    static let opensslSignature = "AIfoDCOuVS53Kqa_GPo7Bfne7SWpyj4D2q1UAo_l75Y"
}

/// `withVerifiedKey`: the bucket's check, the key read in place (decision 041, round 9).
@Suite struct AssetURLSignerInPlaceTests {
    let signer = AssetURLSigner(
        key: "unit-test-signing-key-0123456789abcdef", bucket: "bucket", windowSeconds: 86_400, validitySeconds: 604_800
    )
    let now: Int64 = 1_800_000_123

    func captured(_ key: String) -> String {
        String(decoding: signer.pathSegment(forKey: key, expires: signer.expires(at: now)), as: UTF8.self) + key
    }

    @Test func givesTheKeyAsBytesOfThePath_AndTheExpiry_AsVerifyDoes() throws {
        let path = "/bucket/" + captured("thumbnails/AbCdEf1234.jpg")
        let piece = path.dropFirst("/bucket/".count)
        let (text, owned, expires) = try signer.withVerifiedKey(captured: piece, query: nil, now: now) {
            ($0.string, $0.text != nil, $1)
        }
        #expect(text == "thumbnails/AbCdEf1234.jpg" && !owned)
        #expect(expires == signer.expires(at: now))
        let verified = try signer.verify(captured: piece, query: nil, now: now)
        #expect(verified.key == text && verified.expires == expires)
        // A key checked for the first time (not from this signer's cache) verifies the same way.
        let fresh = AssetURLSigner(
            key: "unit-test-signing-key-0123456789abcdef", bucket: "bucket", windowSeconds: 86_400,
            validitySeconds: 604_800)
        for _ in 0..<2 {
            #expect(try fresh.withVerifiedKey(captured: piece, query: nil, now: now) { key, _ in key.string } == text)
        }
    }

    @Test func refusesWhatVerifyRefuses_WithoutCallingTheBody() throws {
        let good = captured("originals/abc.jpg")
        let expires = signer.expires(at: now)
        let cases: [(String, String?)] = [
            (good.replacingOccurrences(of: "abc.jpg", with: "abd.jpg"), nil),
            ("originals/abc.jpg", nil),
            (
                "originals/abc.jpg",
                "X-Gallery-Expires=\(expires)&X-Gallery-Signature=" + String(repeating: "A", count: 43)
            ),
            ("s/12x/sig/originals/abc.jpg", nil),
        ]
        for (path, query) in cases {
            var called = false
            #expect(throws: AssetURLError.self) {
                try signer.withVerifiedKey(captured: Substring(path), query: query, now: now) { _, _ in called = true }
            }
            #expect(!called, "\(path)")
        }
        // Expired: the same URL later than its expiry.
        #expect(throws: AssetURLError.self) {
            try signer.withVerifiedKey(captured: Substring(good), query: nil, now: expires + 1) { _, _ in }
        }
    }

    @Test func acceptsTheQueryForm_WithTheWholeCaptureAsTheKey() throws {
        let expires = signer.expires(at: now)
        let segment = String(decoding: signer.pathSegment(forKey: "originals/abc.jpg", expires: expires), as: UTF8.self)
        let signature = segment.split(separator: "/")[2]
        let query = "v=2&X-Gallery-Expires=\(expires)&X-Gallery-Signature=\(signature)"
        let key = try signer.withVerifiedKey(captured: "originals/abc.jpg", query: query, now: now) { key, seen in
            #expect(seen == expires)
            return key.string
        }
        #expect(key == "originals/abc.jpg")
    }
}
