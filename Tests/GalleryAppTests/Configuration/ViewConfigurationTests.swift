import Foundation
import Testing

@testable import GalleryApp

/// `[[views]]` in the config file (docs/decisions/038): read as the issue writes it, printed back
/// by `check-config`, and every mistake refused with a line naming the view.
@Suite struct ViewConfigurationTests {
    static let issueTOML = """
        port = 9000
        [[views]]
        class = "Resource"
        source = "Photo"
        [views.fields]
        filename = "filename"
        thumbnailURLString = "thumbnail.url"
        fileURLString = "preview.url"
        """

    static func load(_ text: String) throws -> GalleryConfiguration {
        let file = NSTemporaryDirectory() + "galleryd-views-\(UUID().uuidString).toml"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try GalleryConfiguration.load(file: file, environment: [:])
    }

    /// The reason of the `ConfigurationError` loading `text` throws ("" when it loads).
    static func problem(_ text: String) -> String {
        do {
            _ = try load(text)
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func views_LoadAsTheIssueWritesThem_AndRoundTripThroughCheckConfig() throws {
        let configuration = try Self.load(Self.issueTOML)
        #expect(configuration.port == 9000)
        #expect(
            configuration.views == [
                ViewDefinition(
                    className: "Resource", source: "Photo",
                    fields: [
                        .init(name: "fileURLString", path: "preview.url"), .init(name: "filename", path: "filename"),
                        .init(name: "thumbnailURLString", path: "thumbnail.url"),
                    ])
            ])
        let rendered = configuration.rendered()
        #expect(rendered.contains("[[views]]\nclass = \"Resource\""))
        #expect(try Self.load(rendered) == configuration)
        // Two views; none is a commented example.
        let two = try Self.load(
            Self.issueTOML + "\n[[views]]\nclass = \"Pictures\"\nsource = \"Photo\"\n[views.fields]\nname = \"title\"\n"
        )
        #expect(two.views.map(\.className) == ["Resource", "Pictures"])
        #expect(GalleryConfiguration().rendered().contains("# [[views]]"))
    }

    @Test func views_Mistakes_AreRefused_NamingTheViewAndWhy() {
        let cases: [(toml: String, expected: String)] = [
            ("views = 1", "views: must be an array of tables"),
            (
                "[[views]]\nclass = \"Resource\"\nsource = \"Album\"\n[views.fields]\na = \"title\"",
                "unknown source \"Album\""
            ),
            (
                "[[views]]\nclass = \"Resource\"\nsource = \"Photo\"\n[views.fields]\na = \"thumb.url\"",
                "unknown source path \"thumb.url\""
            ),
            (
                "[[views]]\nclass = \"Resource\"\nsource = \"Photo\"\n[views.fields]\na = \"title.url\"",
                "unknown source path"
            ),
            (
                "[[views]]\nclass = \"Resource\"\nsource = \"Photo\"\n[views.fields]\na = \"thumbnail.size\"",
                "unknown source path"
            ),
            (
                "[[views]]\nclass = \"Resource\"\nsource = \"Photo\"\n[views.fields]\na = \"ACL\"",
                "unknown source path \"ACL\""
            ),
            (
                "[[views]]\nclass = \"Resource\"\nsource = \"Photo\"\n[views.fields]\na = \"owner\"",
                "unknown source path"
            ),
            (
                "[[views]]\nclass = \"Photo\"\nsource = \"Photo\"\n[views.fields]\na = \"title\"",
                "class Photo is a built-in class"
            ),
            ("[[views]]\nclass = \"GalleryItem\"\nsource = \"Photo\"\n[views.fields]\na = \"title\"", "built-in class"),
            (
                "[[views]]\nclass = \"_User\"\nsource = \"Photo\"\n[views.fields]\na = \"title\"",
                "not a Parse class name"
            ),
            (
                "[[views]]\nclass = \"Bad Name\"\nsource = \"Photo\"\n[views.fields]\na = \"title\"",
                "not a Parse class name"
            ),
            (
                "[[views]]\nclass = \"R\"\nsource = \"Photo\"\n[views.fields]\n\"bad-field\" = \"title\"",
                "not a Parse field name"
            ),
            ("[[views]]\nclass = \"R\"\nsource = \"Photo\"\n[views.fields]\nobjectId = \"title\"", "every view's own"),
            ("[[views]]\nclass = \"R\"\nsource = \"Photo\"\n[views.fields]\na = 3", "must be a source path string"),
            ("[[views]]\nclass = \"R\"\nsource = \"Photo\"\n[views.fields]", "names no field"),
            ("[[views]]\nclass = \"R\"\nsource = \"Photo\"", "[views.fields]"),
            ("[[views]]\nsource = \"Photo\"\n[views.fields]\na = \"title\"", "class (the view's Parse class name"),
            ("[[views]]\nclass = \"R\"\n[views.fields]\na = \"title\"", "source (\"Photo\") is required"),
            (
                "[[views]]\nclass = \"R\"\nsource = \"Photo\"\nsorce = 1\n[views.fields]\na = \"title\"",
                "unknown key sorce"
            ),
            (
                "[[views]]\nclass = \"R\"\nsource = \"Photo\"\n[views.fields]\na = \"title\"\n"
                    + "[[views]]\nclass = \"R\"\nsource = \"Photo\"\n[views.fields]\nb = \"title\"",
                "views[1]: class R is defined twice"
            ),
        ]
        for (toml, expected) in cases {
            let problem = Self.problem(toml)
            #expect(problem.contains(expected), "\(toml)\n→ \(problem)")
            #expect(problem.hasPrefix("views"), "\(problem)")
        }
    }
}
