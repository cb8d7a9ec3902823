import Foundation
import Testing

@testable import GalleryApp

/// The query parameters the Parse SDKs send beyond the basic ones (`includeAll`, the read
/// preferences, `hint`, `comment`, `explain`) on finds, gets, `_method: GET` bodies and batch
/// sub-requests, and `GET /serverInfo`. Each was error 102 before; now each is accepted, checked
/// and applied or ignored as Parse Server does on PostgreSQL.
@Suite(.serialized) final class ParseQueryParameterTests {
    let server: TestServer
    let photo: String
    let master = ["X-Parse-Master-Key": TestServer.masterKey]

    init() throws {
        server = try TestServer(workers: 0)
        photo = try server.uploadPhoto(try TestJPEG.make(width: 40, height: 30, seed: 61), name: "q.jpg", title: "Q")
        let gallery = try #require(
            try server.json("POST", "/parse/classes/Gallery", ["name": "G"]).json["objectId"] as? String)
        let item = try server.json(
            "POST", "/parse/classes/GalleryItem",
            [
                "gallery": ["__type": "Pointer", "className": "Gallery", "objectId": gallery],
                "photo": ["__type": "Pointer", "className": "Photo", "objectId": photo],
            ])
        #expect(item.status == 201)
    }

    deinit { server.stop() }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    func find(
        _ className: String, _ parameters: [(String, String)], headers: [String: String] = [:], anonymous: Bool = false
    ) throws -> TestServer.Response {
        let query = parameters.map { "\($0.0)=\(Self.encoded($0.1))" }.joined(separator: "&")
        return try server.request("GET", "/parse/classes/\(className)?\(query)", headers: headers, anonymous: anonymous)
    }

    func expect102(_ r: TestServer.Response, _ fragment: String, _ comment: Comment? = nil) {
        #expect(r.status == 400, comment)
        #expect(r.json["code"] as? Int == 102, comment)
        #expect((r.json["error"] as? String)?.contains(fragment) == true, "\(r.text)")
    }

    @Test func includeAll_ExpandsEveryPointer_LikeIncludeStar() throws {
        let all = try find("GalleryItem", [("includeAll", "true")])
        #expect(all.status == 200)
        let item = try #require((all.json["results"] as? [[String: Any]])?.first)
        #expect((item["photo"] as? [String: Any])?["__type"] as? String == "Object")
        #expect((item["photo"] as? [String: Any])?["title"] as? String == "Q")
        #expect((item["gallery"] as? [String: Any])?["__type"] as? String == "Object")
        #expect((item["gallery"] as? [String: Any])?["name"] as? String == "G")
        let star = try find("GalleryItem", [("include", "*")])
        #expect(NSDictionary(dictionary: star.json) == NSDictionary(dictionary: all.json))
        // With include beside it, and turned off.
        #expect(try find("GalleryItem", [("includeAll", "1"), ("include", "photo")]).status == 200)
        let off = try find("GalleryItem", [("includeAll", "false")])
        #expect(
            ((off.json["results"] as? [[String: Any]])?.first?["photo"] as? [String: Any])?["__type"] as? String
                == "Pointer")
        expect102(try find("GalleryItem", [("includeAll", "yes")]), "includeAll")
    }

    @Test func readPreferences_HintAndComment_AreAcceptedAndIgnored_WhenWellFormed() throws {
        let plain = try find("Photo", [])
        let accepted: [[(String, String)]] = [
            [("readPreference", "SECONDARY")], [("readPreference", "primary")], [("readPreference", "\"NEAREST\"")],
            [("includeReadPreference", "SECONDARY_PREFERRED"), ("subqueryReadPreference", "PRIMARY_PREFERRED")],
            [("hint", "photos_created_at_idx")], [("hint", #"{"createdAt":-1}"#)],
            [("comment", "from the iOS app")], [("comment", "42")],
        ]
        for parameters in accepted {
            let r = try find("Photo", parameters)
            #expect(r.status == 200, "\(parameters)")
            #expect((r.json["results"] as? [Any])?.count == (plain.json["results"] as? [Any])?.count, "\(parameters)")
        }
        expect102(try find("Photo", [("readPreference", "FASTEST")]), "readPreference must be one of")
        expect102(try find("Photo", [("readPreference", "{}")]), "readPreference")
        expect102(try find("Photo", [("includeReadPreference", "true")]), "includeReadPreference")
        expect102(try find("Photo", [("subqueryReadPreference", "[\"PRIMARY\"]")]), "subqueryReadPreference")
        expect102(try find("Photo", [("hint", "[1]")]), "hint must be an index name or an index object")
        expect102(try find("Photo", [("hint", "true")]), "hint")
        expect102(try find("Photo", [("comment", #"{"a":1}"#)]), "comment must be a string")
        expect102(try find("Photo", [("comment", "null")]), "comment")
        // Still nothing unknown is ignored.
        expect102(try find("Photo", [("readPreferences", "PRIMARY")]), "Invalid parameter for query")
    }

    @Test func get_AcceptsTheReadPreferences_AndNothingElseNew() throws {
        let r = try server.request(
            "GET", "/parse/classes/Photo/\(photo)?readPreference=SECONDARY&includeReadPreference=PRIMARY")
        #expect(r.status == 200)
        #expect(r.json["objectId"] as? String == photo)
        expect102(try server.request("GET", "/parse/classes/Photo/\(photo)?readPreference=sometimes"), "readPreference")
        expect102(try server.request("GET", "/parse/classes/Photo/\(photo)?hint=x"), "Invalid parameter for query")
        expect102(
            try server.request("GET", "/parse/classes/Photo/\(photo)?explain=true", headers: master),
            "Invalid parameter")
    }

    @Test func explain_NeedsTheMasterKey_AndAnswersThePostgreSQLPlan() throws {
        let refused = try find("Photo", [("explain", "true")], anonymous: true)
        expect102(refused, "Using the explain query parameter requires the master key")
        #expect(refused.json["error"] as? String == "Using the explain query parameter requires the master key")
        let plan = try find(
            "Photo", [("explain", "true"), ("where", #"{"title":"Q"}"#), ("limit", "5")], headers: master)
        #expect(plan.status == 200)
        #expect(plan.header("ETag") == nil)
        let results = try #require(plan.json["results"] as? [[String: Any]])
        #expect(results.count == 1)
        let document = try #require(results[0]["QUERY PLAN"] as? [[String: Any]])
        let root = try #require(document.first?["Plan"] as? [String: Any])
        #expect(root["Node Type"] as? String == "Limit")
        // Planned, not run: no actual times.
        #expect(root["Actual Rows"] == nil)
        // A count alone explains the count.
        let count = try find(
            "Photo", [("explain", "1"), ("count", "1"), ("limit", "0"), ("where", #"{"width":{"$gt":1}}"#)],
            headers: master)
        let countPlan = try #require(
            ((count.json["results"] as? [[String: Any]])?.first?["QUERY PLAN"] as? [[String: Any]])?.first?["Plan"]
                as? [String: Any])
        #expect(countPlan["Node Type"] as? String == "Aggregate")
        #expect(try find("Photo", [("explain", "queryPlanner")], headers: master).status == 200)
        #expect(try find("Photo", [("explain", "false")]).json["results"] != nil)
        expect102(try find("Photo", [("explain", "maybe")], headers: master), "explain must be true or false")
    }

    @Test func methodGETBodies_CarryTheNewParameters() throws {
        let body: [String: Any] = [
            "_method": "GET", "includeAll": true, "readPreference": "SECONDARY", "hint": ["createdAt": -1],
            "comment": "c",
        ]
        let r = try server.json("POST", "/parse/classes/GalleryItem", body)
        #expect(r.status == 200)
        #expect(
            ((r.json["results"] as? [[String: Any]])?.first?["photo"] as? [String: Any])?["__type"] as? String
                == "Object")
        let refused = try server.json(
            "POST", "/parse/classes/Photo", ["_method": "GET", "explain": true], anonymous: true)
        expect102(refused, "requires the master key")
        let explained = try server.json(
            "POST", "/parse/classes/Photo", ["_method": "GET", "explain": true], headers: master)
        #expect((explained.json["results"] as? [[String: Any]])?.first?["QUERY PLAN"] != nil)
        expect102(try server.json("POST", "/parse/classes/Photo", ["_method": "GET", "comment": ["no"]]), "comment")
    }

    @Test func batchSubRequests_CarryTheNewParameters_ExplainOnlyWithTheMasterKey() throws {
        let requests: [[String: Any]] = [
            [
                "method": "GET", "path": "/parse/classes/GalleryItem",
                "body": ["includeAll": true, "readPreference": "PRIMARY"],
            ],
            [
                "method": "GET", "path": "/parse/classes/Photo/\(photo)",
                "body": ["readPreference": "NEAREST", "keys": "title"],
            ],
            ["method": "GET", "path": "/parse/classes/Photo", "body": ["explain": true]],
            ["method": "GET", "path": "/parse/classes/Photo", "body": ["hint": [1]]],
        ]
        let r = try server.json("POST", "/parse/batch", ["requests": requests])
        #expect(r.status == 200)
        let answers = r.jsonArray.compactMap { $0 as? [String: Any] }
        #expect(answers.count == 4)
        let items = (answers[0]["success"] as? [String: Any])?["results"] as? [[String: Any]]
        #expect((items?.first?["photo"] as? [String: Any])?["__type"] as? String == "Object")
        #expect((answers[1]["success"] as? [String: Any])?["title"] as? String == "Q")
        #expect((answers[1]["success"] as? [String: Any])?["width"] == nil)
        // With the master key (TestServer's default) explain answers the plan.
        let plan = (answers[2]["success"] as? [String: Any])?["results"] as? [[String: Any]]
        #expect(plan?.first?["QUERY PLAN"] != nil)
        #expect((answers[3]["error"] as? [String: Any])?["code"] as? Int == 102)
        // Without it, explain in a batch is refused as alone.
        let refused = try server.json("POST", "/parse/batch", ["requests": [requests[2]]], anonymous: true)
        let error = (refused.jsonArray.first as? [String: Any])?["error"] as? [String: Any]
        #expect(error?["code"] as? Int == 102)
        #expect(error?["error"] as? String == "Using the explain query parameter requires the master key")
    }

    @Test func serverInfo_NeedsTheMasterKey_AndSaysWhatIsSupported() throws {
        let refused = try server.request("GET", "/parse/serverInfo", anonymous: true)
        #expect(refused.status == 403)
        #expect(refused.json["error"] as? String == "unauthorized")
        #expect(
            try server.request("GET", "/parse/serverInfo", headers: ["X-Parse-Master-Key": "wrong-master-key-0000"])
                .status == 403)
        let info = try server.request("GET", "/parse/serverInfo", headers: master)
        #expect(info.status == 200)
        let version = try #require(info.json["parseServerVersion"] as? String)
        #expect(version.split(separator: ".").count == 3 && version.split(separator: ".").allSatisfy { Int($0) != nil })
        let features = try #require(info.json["features"] as? [String: [String: Bool]])
        #expect(Set(features.keys) == ["globalConfig", "hooks", "cloudCode", "logs", "push", "schemas", "settings"])
        #expect(features["schemas"]?["addClass"] == false)
        #expect(features["push"]?["immediatePush"] == false)
        #expect(features.values.allSatisfy { $0.values.allSatisfy { !$0 } })
    }
}
