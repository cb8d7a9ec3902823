import Foundation
import GalleryTestSupport
import Testing

/// `galleryd check-config` on `[[views]]`: a bad view is one line naming it and exit code 2; with
/// `--serving`, a view that would hide an app's custom class is refused too, and so is `serve`.
@Suite(.serialized) struct CheckConfigViewsTests {
    static func write(_ text: String) throws -> String {
        let file = NSTemporaryDirectory() + "galleryd-check-views-" + UUID().uuidString + ".toml"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    static func view(_ className: String, source: String = "Photo", path: String = "thumbnail.url") -> String {
        "[[views]]\nclass = \"\(className)\"\nsource = \"\(source)\"\n[views.fields]\nthumb = \"\(path)\"\n"
    }

    @Test func checkConfig_ABadView_IsOneLineAndExit2() throws {
        let cases = [
            (Self.view("Resource", source: "Album"), "views[0]: unknown source \"Album\""),
            (Self.view("Resource", path: "thumbnail.href"), "unknown source path \"thumbnail.href\""),
            (Self.view("Gallery"), "class Gallery is a built-in class"),
            (Self.view("9Lives"), "not a Parse class name"),
        ]
        for (toml, expected) in cases {
            let file = try Self.write(toml)
            defer { try? FileManager.default.removeItem(atPath: file) }
            let run = try GalleryCommandRun.galleryd(["check-config", "--config", file], databaseURL: "")
            #expect(run.status == 2 && run.error.contains(expected), "\(run.error)")
        }
        let file = try Self.write(Self.view("Resource"))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let good = try GalleryCommandRun.galleryd(["check-config", "--config", file], databaseURL: "")
        #expect(good.status == 0 && good.output.contains("[[views]]\nclass = \"Resource\""), "\(good.error)")
    }

    @Test func checkConfigServing_AndServe_RefuseAViewHidingACustomClass() throws {
        let lock = try ClusterLock.acquireFileDescriptor()
        defer { close(lock) }
        let database = try ScratchDatabase(prefix: "galleryd_check_views")
        defer { database.drop() }
        // The app already has a custom class called Resource.
        let plain = try ServeProcess(databaseURL: database.url)
        let made = try plain.send(
            "POST", "/parse/schemas/Resource", #"{"fields":{"filename":{"type":"String"}}}"#,
            headers: ["X-Parse-Master-Key": TestKeys.masterKey])
        #expect(made.status == 200, "\(made.json)")
        _ = try plain.stop()

        let keys = "master_key = \"\(TestKeys.masterKey)\"\nurl_signing_key = \"\(TestKeys.urlSigningKey)\"\n"
        let file = try Self.write(keys + Self.view("Resource"))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let run = try GalleryCommandRun.galleryd(
            ["check-config", "--serving", "--config", file], databaseURL: database.url)
        #expect(run.status == 2 && run.error.contains("class Resource is already a custom class"), "\(run.error)")
        #expect(throws: (any Error).self) {
            _ = try ServeProcess(databaseURL: database.url, environment: ["GALLERYD_CONFIG": file])
        }
        // Another name is fine.
        let other = try Self.write(keys + Self.view("Pictures"))
        defer { try? FileManager.default.removeItem(atPath: other) }
        let fine = try GalleryCommandRun.galleryd(
            ["check-config", "--serving", "--config", other], databaseURL: database.url)
        #expect(fine.status == 0, "\(fine.error)")
    }
}
