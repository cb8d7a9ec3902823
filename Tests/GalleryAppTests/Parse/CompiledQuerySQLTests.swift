import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// `ParseCompiledQuery.find` and `bindLiterals`, the hook `galleryd compile-query` and
/// bench/manifest.sh use to time the SQL the compiler really emits: the statement prepared by
/// hand with its literal arguments must return what the route returns, and a bad query must fail
/// with the route's Parse error.
@Suite struct CompiledQuerySQLTests {
    typealias F = ManifestFixtures

    /// Runs `statement` the way bench/manifest.sh does: PREPARE without parameter types, then
    /// EXECUTE with the SQL-literal arguments.
    static func prepareAndExecute(_ server: TestServer, _ statement: ParseSQLStatement) throws -> [PostgresRow] {
        try server.application.pool.withConnection { connection in
            try connection.execute("prepare compiled_query_test as \(statement.sql)")
            defer { try? connection.execute("deallocate compiled_query_test") }
            let arguments = statement.bindLiterals.joined(separator: ",")
            return Array(
                try connection.query("execute compiled_query_test" + (arguments.isEmpty ? "" : "(\(arguments))")))
        }
    }

    @Test func compiledStatements_PreparedWithLiterals_ReturnWhatTheRouteReturns() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try ManifestQueryTests.sixPhotos(server)
        // Quotes and backslashes inside text and text[] literals.
        let awkward = #"o'brien "quoted" back\slash"#
        try F.insert(
            server,
            [
                F.Row(
                    id: "gggggggggg", createdAt: ManifestQueryTests.t0.addingTimeInterval(600), filename: "it's.jpg",
                    title: awkward, tags: [awkward, "plain"])
            ])
        let t3 = ManifestQueryTests.t0.addingTimeInterval(180)
        let cases: [[String: String]] = [
            ["order": "-createdAt", "limit": "20"],
            ["count": "1", "limit": "0"],
            ["count": "1", "limit": "3", "where": F.json(["tags": ["$all": ["beach"]]])],
            ["where": F.json(["tags": ["$all": [awkward]]])],
            ["where": F.json(["title": ["$in": [awkward, "Mountain lake"]]])],
            ["where": F.json(["filename": ["$regex": "^it's"]])],
            ["where": F.json(["createdAt": ["$lt": F.date(t3)]]), "order": "createdAt"],
            ["where": F.json(["byteSize": ["$gte": 300], "status": "ready"])],
            ["where": F.json(["title": ["$text": ["$search": ["$term": "lake"]]]])],
        ]
        var nonEmpty = 0
        for items in cases {
            let compiled = try ParseCompiledQuery.find(
                className: "Photo", rawQuery: F.query(items), configuration: server.application.configuration)
            let response = try F.find(server, items)
            #expect(response.status == 200, "\(items): \(response.text)")
            #expect((compiled.select == nil) == (items["limit"] == "0"), "\(items)")
            #expect((compiled.count == nil) == (items["count"] == nil), "\(items)")
            if let select = compiled.select {
                let ids = try Self.prepareAndExecute(server, select).map { try $0.decode(String.self, "object_id") }
                #expect(ids == F.ids(response), "\(items): \(select.sql)")
                nonEmpty += ids.isEmpty ? 0 : 1
            }
            if let count = compiled.count {
                let rows = try Self.prepareAndExecute(server, count)
                #expect(rows.count == 1)
                #expect(
                    try rows.first?.decode(Int64.self, 0) == (response.json["count"] as? NSNumber)?.int64Value,
                    "\(items)")
            }
        }
        #expect(nonEmpty == cases.count - 1)  // every case but the count alone selects some rows
    }

    /// `access` (`galleryd compile-query --user`): compiled for a user's session, the statements
    /// are the route's for that session: the user's photos alone, the count from their counter.
    @Test func compiledStatements_ForAUser_ReturnWhatTheRouteReturnsForTheirSession() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let alicePhotos = try server.insertPhotos(3, owner: alice.objectId)
        let bobPhotos = try server.insertPhotos(2, owner: bob.objectId)
        let configuration = server.application.configuration
        for items in [
            ["order": "-createdAt", "limit": "20"], ["count": "1", "limit": "0"], ["count": "1", "limit": "2"],
        ] {
            let compiled = try ParseCompiledQuery.find(
                className: "Photo", rawQuery: F.query(items), configuration: configuration,
                access: ParseAccess(caller: .user(objectId: alice.objectId)))
            let response = try F.find(server, items, headers: alice.headers)
            #expect(response.status == 200, "\(items): \(response.text)")
            if let select = compiled.select {
                #expect(select.sql.contains("t.owner_id = "), "\(select.sql)")
                let ids = try Self.prepareAndExecute(server, select).map { try $0.decode(String.self, "object_id") }
                #expect(ids == F.ids(response), "\(items): \(select.sql)")
                #expect(Set(ids).isSubset(of: Set(alicePhotos)) && ids.count == min(3, Int(items["limit"]!)!))
            }
            if let count = compiled.count {
                #expect(count.sql.contains("owner_row_counts"), "\(count.sql)")
                let rows = try Self.prepareAndExecute(server, count)
                #expect(try rows.first?.decode(Int64.self, 0) == 3)
                #expect((response.json["count"] as? NSNumber)?.int64Value == 3)
            }
        }
        // The master key's statement (the default) is another one: every photo.
        let master = try ParseCompiledQuery.find(className: "Photo", rawQuery: "limit=20", configuration: configuration)
        let all = try Self.prepareAndExecute(server, try #require(master.select)).map {
            try $0.decode(String.self, "object_id")
        }
        #expect(Set(all) == Set(alicePhotos + bobPhotos))
    }

    /// migrations/0016: a user's ranked `$text` finds their matches in `photos_owner_search_idx`
    /// (owner and text in one GIN index), not by AND-ing the text's matches with the owner's whole
    /// range of another index (which walked 900,000 entries per query for a user with 1M photos
    /// among 10M), and returns the route's rows: the user's matches only.
    @Test func usersRankedText_FindsTheirMatchesInTheOwnerSearchIndex() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        // 20,000 rows, every other one alice's; 4 in 100 titled with both words.
        try server.application.pool.query(
            """
            insert into photos (object_id, filename, title, byte_size, checksum, width, height, aspect_ratio,
                                original_key, status, owner_id)
            select 'r' || lpad(i::text, 9, '0'), 'IMG_' || i || '.jpg',
                   case when i % 100 < 4 then 'Kyoto harbor at dusk' else 'Quiet street in Lisbon' end,
                   1000, md5(i::text), 400, 300, 1.3333333333333333, 'originals/' || md5(i::text) || '.jpg', 'ready',
                   case when i % 2 = 0 then $1 else $2 end
              from generate_series(1, 20000) i
            """, [alice.objectId, bob.objectId])
        try server.application.pool.execute("analyze photos")
        let items = [
            "order": "$score", "limit": "20",
            "where": F.json(["title": ["$text": ["$search": ["$term": "kyoto harbor"]]]]),
        ]
        let compiled = try ParseCompiledQuery.find(
            className: "Photo", rawQuery: F.query(items), configuration: server.application.configuration,
            access: ParseAccess(caller: .user(objectId: alice.objectId)))
        let select = try #require(compiled.select)
        let plan = try server.application.pool.withConnection { connection -> String in
            try connection.execute("prepare ranked_text_plan as \(select.sql)")
            defer { try? connection.execute("deallocate ranked_text_plan") }
            let rows = try connection.query(
                "explain execute ranked_text_plan(\(select.bindLiterals.joined(separator: ",")))")
            return try rows.map { try $0.decode(String.self, 0) }.joined(separator: "\n")
        }
        #expect(plan.contains("photos_owner_search_idx"), "\(plan)")
        #expect(!plan.contains("BitmapAnd"), "\(plan)")
        let response = try F.find(server, items, headers: alice.headers)
        #expect(response.status == 200, "\(response.text)")
        let ids = try Self.prepareAndExecute(server, select).map { try $0.decode(String.self, "object_id") }
        #expect(ids.count == 20 && ids == F.ids(response))
        let owners = try server.application.pool.query(
            "select distinct owner_id from photos where object_id = any($1::text[])", [ids])
        #expect(try owners.map { try $0.decode(String.self, 0) } == [alice.objectId])
    }

    @Test func compiledStatements_FailWithTheRoutesParseError_ForABadQuery() {
        let configuration = GalleryConfiguration()
        func code(_ className: String, _ rawQuery: String) -> Int? {
            do {
                _ = try ParseCompiledQuery.find(className: className, rawQuery: rawQuery, configuration: configuration)
                return nil
            } catch let error as ParseError {
                return error.code
            } catch {
                return -1
            }
        }
        #expect(code("NoSuchClass", "limit=1") == ParseError.Code.invalidClassName)
        #expect(code("Photo", "limit=many") == ParseError.Code.invalidQuery)
        #expect(code("Photo", "where=%7Bnot%20json") == ParseError.Code.invalidQuery)
        #expect(code("Photo", "colour=red") == ParseError.Code.invalidQuery)
        #expect(code("Photo", "skip=10001") == ParseError.Code.invalidQuery)  // max_query_skip, as the route
        #expect(code("Photo", "limit=1") == nil)
    }

    @Test func bindLiterals_QuoteEachTypeInItsInputSyntax() {
        let statement = ParseSQLStatement(
            sql: "",
            binds: [.null, .text("it's"), .int(-5), .double(0.5), .bool(true), .textArray(["a\"b", "c'd", #"e\f"#])])
        #expect(statement.bindLiterals == ["NULL", "'it''s'", "'-5'", "'0.5'", "'true'", #"'{"a\"b","c''d","e\\f"}'"#])
    }
}
