import Foundation
import Testing

@testable import GalleryApp

/// Relation fields of custom classes: `AddRelation`/`RemoveRelation` (and a `Batch` of both) on
/// create and update, a field added by its first operation, `$relatedTo`, the join table dropped
/// with the field, and Parse's errors for what a relation does not take.
struct CustomRelationTests {
    private func created(_ response: TestServer.Response) throws -> String {
        try #require(response.json["objectId"] as? String, "\(response.status) \(response.text)")
    }

    private func fans(_ ids: [String]) -> [[String: Any]] {
        ids.map { ["__type": "Pointer", "className": "Fan", "objectId": $0] }
    }

    private func related(_ post: String, key: String = "likes") -> [String: Any] {
        ["$relatedTo": ["object": ["__type": "Pointer", "className": "Post", "objectId": post], "key": key]]
    }

    @Test func relations_AddRemoveAndRelatedTo() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        #expect(
            try server.json(
                "POST", "/parse/schemas/Post",
                ["fields": ["title": ["type": "String"], "likes": ["type": "Relation", "targetClass": "Fan"]]]
            ).status == 200)
        var ids: [String] = []
        for name in ["f1", "f2", "f3"] {
            ids.append(try created(try server.json("POST", "/parse/classes/Fan", ["name": name])))
        }
        let post = try created(
            try server.json(
                "POST", "/parse/classes/Post",
                ["title": "t", "likes": ["__op": "AddRelation", "objects": fans([ids[0], ids[1]])]]))
        func names() throws -> [String] {
            CustomSubqueryTests.names(try CustomSubqueryTests.find(server, "Fan", related(post)))
        }
        #expect(try names() == ["f1", "f2"])

        // A Batch of both, as the SDKs send a relation changed twice before a save.
        let batch: [String: Any] = [
            "__op": "Batch",
            "ops": [
                ["__op": "AddRelation", "objects": fans([ids[2]])],
                ["__op": "RemoveRelation", "objects": fans([ids[0]])],
            ],
        ]
        #expect(try server.json("PUT", "/parse/classes/Post/\(post)", ["likes": batch]).status == 200)
        #expect(try names() == ["f2", "f3"])
        // Adding again is no error and no duplicate; removing what is not there neither.
        #expect(
            try server.json(
                "PUT", "/parse/classes/Post/\(post)",
                ["likes": ["__op": "AddRelation", "objects": fans([ids[2]])]]
            ).status == 200)
        #expect(
            try server.json(
                "PUT", "/parse/classes/Post/\(post)",
                ["likes": ["__op": "RemoveRelation", "objects": fans([ids[0], ids[1]])]]
            ).status == 200)
        #expect(try names() == ["f3"])
        // With other constraints, and counted.
        let counted = try CustomSubqueryTests.find(
            server, "Fan", related(post).merging(["name": "f3"]) { a, _ in a }, extra: "&count=1")
        #expect(counted.json["count"] as? Int == 1, "\(counted.text)")

        // A field added by its first operation: a Relation to the objects' class.
        #expect(
            try server.json(
                "PUT", "/parse/classes/Post/\(post)", ["followers": ["__op": "AddRelation", "objects": fans([ids[0]])]]
            ).status == 200)
        let fields = try server.request("GET", "/parse/schemas/Post").json["fields"] as? [String: [String: String]]
        #expect(fields?["followers"] == ["type": "Relation", "targetClass": "Fan"], "\(String(describing: fields))")
        #expect(
            CustomSubqueryTests.names(try CustomSubqueryTests.find(server, "Fan", related(post, key: "followers"))) == [
                "f1"
            ])

        // The object's deletion empties its relations; the field's deletion drops its join table.
        #expect(
            try server.json("PUT", "/parse/schemas/Post", ["fields": ["followers": ["__op": "Delete"]]]).status == 200)
        #expect(
            try CustomSubqueryTests.find(server, "Fan", related(post, key: "followers")).json["code"] as? Int == 102)
        #expect(try server.request("DELETE", "/parse/classes/Post/\(post)").status == 200)
        #expect(try names().isEmpty)
    }

    @Test func relations_Refused_AsParseRefusesThem() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        #expect(
            try server.json(
                "POST", "/parse/schemas/Post",
                ["fields": ["title": ["type": "String"], "likes": ["type": "Relation", "targetClass": "Fan"]]]
            ).status == 200)
        let fan = try created(try server.json("POST", "/parse/classes/Fan", ["name": "f"]))
        let post = try created(try server.json("POST", "/parse/classes/Post", ["title": "t"]))
        func put(_ body: [String: Any]) throws -> Int? {
            try server.json("PUT", "/parse/classes/Post/\(post)", body).json["code"] as? Int
        }
        #expect(try put(["likes": "x"]) == 111)
        #expect(try put(["likes": ["__op": "Increment", "amount": 1]]) == 111)
        #expect(
            try put([
                "likes": [
                    "__op": "AddRelation", "objects": [["__type": "Pointer", "className": "Other", "objectId": fan]],
                ]
            ])
                == 111)
        #expect(
            try put(["likes": ["__op": "AddRelation", "objects": [["__type": "Pointer", "className": "Fan"]]]]) == 106)
        #expect(try put(["likes": ["__op": "AddRelation"]]) == 107)
        // Unknown relation key, a field that is no Relation, a Relation to another class: 102.
        func code(_ whereObject: [String: Any], _ className: String = "Fan", _ headers: [String: String] = [:]) throws
            -> Int?
        {
            try CustomSubqueryTests.find(server, className, whereObject, headers: headers).json["code"] as? Int
        }
        #expect(try code(related(post, key: "nope")) == 102)
        #expect(try code(related(post, key: "title")) == 102)
        #expect(try code(related(post), "Post") == 102)
        #expect(
            try code(["$relatedTo": ["object": ["__type": "Pointer", "className": "Post"], "key": "likes"]]) == 102)
        #expect(try code(["$relatedTo": "likes"]) == 102)
        // An object of a class that does not exist: 119 for a user (the master key finds nothing).
        let user = try server.makeUser("erin")
        #expect(
            try server.json("PUT", "/parse/schemas/Fan", ["classLevelPermissions": ["find": ["*": true]]]).status == 200
        )
        let ghost: [String: Any] = [
            "$relatedTo": ["object": ["__type": "Pointer", "className": "Ghost", "objectId": post], "key": "likes"]
        ]
        #expect(try code(ghost, "Fan", user.headers) == 119)
        #expect(try CustomSubqueryTests.find(server, "Fan", ghost).status == 200)
    }
}
