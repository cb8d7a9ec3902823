import BlobStore
import Foundation
import HTTPServer
import Testing

@testable import GalleryApp

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The Flickr answer formats, argument reading and file names, without a server.
@Suite struct FlickrFormatTests {
    private func text(_ response: HTTPResponse) -> String {
        guard case .bytes(let bytes) = response.body else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    private let entries: [FlickrValue.Entry] = [
        (
            "photos",
            .object([
                ("page", .int(1)), ("total", .int(2)),
                ("photo", .list([.object([("id", .string("a1")), ("title", .string("<b>\"x\" & 'y'</b>\n"))])])),
            ])
        ),
        ("title", .text("t&t")),
    ]

    @Test func json_KeepsFlickrsTypes_AndWrapsInTheCallbackUnlessNoJSONCallback() throws {
        let plain = text(FlickrFormat.json(callback: nil).success(entries))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(plain.utf8)) as? [String: Any])
        let photos = try #require(object["photos"] as? [String: Any])
        #expect(photos["page"] as? Int == 1 && object["stat"] as? String == "ok")
        let photo = try #require((photos["photo"] as? [[String: Any]])?.first)
        #expect(photo["id"] as? String == "a1" && photo["title"] as? String == "<b>\"x\" & 'y'</b>\n")
        #expect((object["title"] as? [String: Any])?["_content"] as? String == "t&t")
        let wrapped = text(FlickrFormat.json(callback: "jsonFlickrApi").success(entries))
        #expect(wrapped.hasPrefix("jsonFlickrApi({") && wrapped.hasSuffix("})"))
    }

    @Test func xml_EscapesAttributesAndText_AndParses() throws {
        let xml = text(FlickrFormat.rest.success(entries))
        #expect(xml.contains("<rsp stat=\"ok\">"))
        #expect(xml.contains("title=\"&lt;b&gt;&quot;x&quot; &amp; &apos;y&apos;&lt;/b&gt;&#10;\""))
        #expect(xml.contains("<title>t&amp;t</title>"))
        #expect(xml.contains("<photos page=\"1\" total=\"2\"><photo id=\"a1\""))
        let parser = XMLParser(data: Data(xml.utf8))
        #expect(parser.parse(), "\(xml)")
        #expect(XMLText.escaped("a\u{1}b") == "a\u{FFFD}b")
    }

    @Test func errors_AreFlickrs_InBothFormats() {
        let json = text(FlickrFormat.json(callback: nil).failure(.methodNotFound("x.y")))
        #expect(json == #"{"stat":"fail","code":112,"message":"Method \"x.y\" not found"}"#)
        let xml = text(FlickrFormat.rest.failure(.invalidAPIKey))
        #expect(
            xml.contains("<rsp stat=\"fail\">")
                && xml.contains("<err code=\"100\" msg=\"Invalid API Key (Key has invalid format)\" />"))
    }

    @Test func format_DefaultsToRest_RefusesUnknownFormats_AndCallbacksThatAreNotIdentifiers() throws {
        func parse(_ items: [(String, String)]) -> Result<FlickrFormat, FlickrError> {
            FlickrFormat.parse(FlickrParameters(items.map { (name: $0.0, value: $0.1) }))
        }
        #expect(try parse([]).get() == .rest)
        #expect(try parse([("format", "json")]).get() == .json(callback: "jsonFlickrApi"))
        #expect(try parse([("format", "json"), ("nojsoncallback", "1")]).get() == .json(callback: nil))
        #expect(try parse([("format", "json"), ("jsoncallback", "my_cb$1")]).get() == .json(callback: "my_cb$1"))
        for bad in ["alert(1);x", "1abc", "", "a.b", String(repeating: "a", count: 65)] {
            guard case .failure(let error) = parse([("format", "json"), ("jsoncallback", bad)]) else {
                Issue.record("accepted \(bad)")
                continue
            }
            #expect(error.status == 400)
        }
        guard case .failure(let error) = parse([("format", "xmlrpc")]) else {
            Issue.record("xmlrpc accepted")
            return
        }
        #expect(error.code == 111)
    }

    @Test func oauthHeader_CarriesTheConsumerKey() {
        let header = #"OAuth oauth_nonce="123", oauth_consumer_key="gal%20lery", oauth_signature="x%3D""#
        #expect(FlickrParameters.oauthParameter("oauth_consumer_key", in: header) == "gal lery")
        #expect(FlickrParameters.oauthParameter("oauth_consumer_key", in: "Bearer oauth_consumer_key=x") == nil)
        #expect(FlickrParameters.oauthParameter("oauth_consumer_key", in: nil) == nil)
    }

    @Test func paging_IsClampedAsFlickrs() {
        func paging(_ perPage: String?, _ page: String?) -> String {
            var items: [(name: String, value: String)] = []
            if let perPage { items.append(("per_page", perPage)) }
            if let page { items.append(("page", page)) }
            let result = FlickrSearch.paging(FlickrParameters(items))
            return "\(result.page) \(result.perPage)"
        }
        #expect(paging(nil, nil) == "1 100")
        #expect(paging("0", "0") == "1 100")
        #expect(paging("10000", "-3") == "1 500")
        #expect(paging("abc", "7") == "7 100")
        #expect(paging("25", "99999999999") == "\(FlickrSearch.maxPage) 25")
    }

    @Test func dates_AreUnixSecondsOrMySQLDatetimes() {
        #expect(FlickrSearch.date("86400") == Date(timeIntervalSince1970: 86400))
        #expect(FlickrSearch.date("1970-01-02") == Date(timeIntervalSince1970: 86400))
        #expect(FlickrSearch.date("1970-01-02 00:00:01") == Date(timeIntervalSince1970: 86401))
        #expect(FlickrSearch.date("yesterday") == nil && FlickrSearch.date("99999999999999999999") == nil)
    }

    @Test func secrets_AreStablePerPhoto_DifferForTheOriginal_AndVerify() {
        let secrets = FlickrSecrets(key: String(repeating: "k", count: 32))
        let secret = secrets.secret(photoId: "abc123")
        #expect(secret.count == 10 && secret.allSatisfy(\.isHexDigit))
        #expect(secret == secrets.secret(photoId: "abc123") && secret != secrets.secret(photoId: "abc124"))
        #expect(secrets.originalSecret(photoId: "abc123") != secret)
        #expect(secrets.verify(secret, photoId: "abc123", original: false))
        #expect(!secrets.verify(secret, photoId: "abc123", original: true))
        #expect(!secrets.verify(String(secret.dropLast()) + "x", photoId: "abc123", original: false))
        #expect(
            !FlickrSecrets(key: String(repeating: "j", count: 32)).verify(secret, photoId: "abc123", original: false))
    }

    /// Python's `hmac.new(key, b"galleryd-flickr-v1\nabc123", sha256).hexdigest()[:10]`: a key
    /// shorter than, as long as, and longer than SHA-256's block.
    @Test func secrets_AreHMACSHA256_OfShortAndLongKeys() {
        #expect(FlickrSecrets(key: String(repeating: "k", count: 32)).secret(photoId: "abc123") == "d8177ee26a")
        #expect(FlickrSecrets(key: String(repeating: "l", count: 64)).secret(photoId: "abc123") == "2d89a83454")
        #expect(FlickrSecrets(key: String(repeating: "m", count: 100)).secret(photoId: "abc123") == "3d965dcf16")
    }

    @Test func mysqlDates_AreUTC() {
        #expect(FlickrAPI.mysqlDate(0) == "1970-01-01 00:00:00")
        #expect(FlickrAPI.mysqlDate(951_827_696) == "2000-02-29 12:34:56")
        #expect(FlickrAPI.mysqlDate(1_767_225_599) == "2025-12-31 23:59:59")
        #expect(FlickrAPI.mysqlDate(-1) == "1969-12-31 23:59:59")
    }

    @Test func fileNames_MapSuffixesToTheLadder() throws {
        let medium = try FlickrAssetRoutes.parse("Abc123_0123456789.jpg").get()
        #expect(medium.id == "Abc123" && medium.secret == "0123456789" && medium.size == .m)
        #expect(try FlickrAssetRoutes.parse("Abc123_0123456789_m.jpg").get().size == .s)
        #expect(try FlickrAssetRoutes.parse("Abc123_0123456789_s.jpg").get().size == .sq)
        #expect(try FlickrAssetRoutes.parse("Abc123_0123456789_o.png").get().size == .o)
        for bad in ["Abc123_0123456789_x.jpg", "Abc123.jpg", "Abc123_0123456789_t.png", "a_b_c_d.jpg", "no-dot"] {
            guard case .failure(let error) = FlickrAssetRoutes.parse(bad) else {
                Issue.record("accepted \(bad)")
                continue
            }
            #expect(error.status == .badRequest)
        }
    }
}
