import Foundation
import Testing

@testable import GalleryApp

/// parse_rest (Python, PyPI `qs-parse-rest`: ParsePy for Python 3) against galleryd: a custom
/// class's objects created, queried, updated and deleted, a Relation queried through a fetched
/// object (`$relatedTo`, also of an object it may not read), and a view over photos queried, as that
/// independent client sends them (Tests/e2e/parse_rest_e2e.py; scripts/test.sh installs it).
@Suite struct ParseRestClientTests {
    @Test func parseRest_DrivesACustomClassAndAView() throws {
        // Listening: parse_rest, in another process, calls the server over HTTP.
        let server = try TestServer(workers: 0, listening: true) {
            $0.restKey = "test-rest-key"
            $0.publicRead = true
            $0.views = [
                ViewDefinition(
                    className: "Resource", source: "Photo",
                    fields: [
                        .init(name: "filename", path: "filename"),
                        .init(name: "thumbnailURLString", path: "thumbnail.url"),
                    ])
            ]
        }
        defer { server.stop() }
        let created = try server.json(
            "POST", "/parse/schemas/GameScore",
            [
                "fields": [
                    "score": ["type": "Number"], "playerName": ["type": "String"], "cheatMode": ["type": "Boolean"],
                    "skills": ["type": "Array"],
                ],
                "classLevelPermissions": [
                    "get": ["*": true], "find": ["*": true], "count": ["*": true], "create": ["*": true],
                    "update": ["*": true], "delete": ["*": true],
                ],
            ])
        #expect(created.status == 200, "\(created.text)")
        let league = try server.json(
            "POST", "/parse/schemas/League",
            [
                "fields": ["name": ["type": "String"], "scores": ["type": "Relation", "targetClass": "GameScore"]],
                "classLevelPermissions": [
                    "get": ["*": true], "find": ["*": true], "create": ["*": true], "update": ["*": true],
                ],
            ])
        #expect(league.status == 200, "\(league.text)")
        let photos = try server.insertPhotos(3, owner: nil)
        try server.application.pool.query(
            "update photos set thumbnail_key = 'thumbnails/' || object_id || '.jpg', acl = '{\"*\":{\"read\":true}}'")
        let python = try #require(
            ProcessInfo.processInfo.environment["GALLERYD_TEST_PYTHON"],
            "GALLERYD_TEST_PYTHON is not set: run the tests with scripts/test.sh, which installs parse_rest")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("e2e/parse_rest_e2e.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            script, server.baseURL, TestServer.appID, "test-rest-key", TestServer.masterKey, "\(photos.count)",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("\"ok\": true"), "\(text)")
    }
}
