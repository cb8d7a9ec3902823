import Foundation
import Testing

@testable import GalleryApp

/// `serve` and `check-config --serving` refuse the secrets the repository ships in its examples and
/// keys of low variety, whatever their length.
@Suite struct SecretPolicyTests {
    /// A configuration `validateForServing` accepts, to spoil one key at a time.
    var serving: GalleryConfiguration {
        var configuration = GalleryConfiguration()
        configuration.databaseURL = "postgresql://localhost/x"
        configuration.masterKey = "7f3c9a0e5b21d84c6f1e0a9b3d7c5e28"
        configuration.urlSigningKey = "c41f0e9d2b7a6358e1f4c0a9d2b76e35a8f1c04d9e2b7a63"
        return configuration
    }

    /// `KEY=value` lines of an example file under the repository root.
    static func assignments(in path: String) throws -> [String: String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let pair = line.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { values[String(pair[0])] = String(pair[1]) }
        }
        return values
    }

    @Test func serving_RefusesEverySecretTheExampleFilesShip() throws {
        try serving.validateForServing()
        var found = 0
        for file in ["docker/.env.example", "config/systemd/galleryd.env.example"] {
            let values = try Self.assignments(in: file)
            for (name, value) in values where name.hasSuffix("_KEY") || name.hasSuffix("PASSWORD") {
                #expect(
                    SecretPolicy.shippedPlaceholders.contains(value),
                    "\(file): \(name)=\(value) is not in the shipped list")
            }
            if let master = values["GALLERYD_MASTER_KEY"] {
                var configuration = serving
                configuration.masterKey = master
                #expect(throws: ConfigurationError.self, "\(file): master key \(master)") {
                    try configuration.validateForServing()
                }
                found += 1
            }
            if let signing = values["GALLERYD_URL_SIGNING_KEY"] {
                var configuration = serving
                configuration.urlSigningKey = signing
                #expect(throws: ConfigurationError.self, "\(file): signing key \(signing)") {
                    try configuration.validateForServing()
                }
                found += 1
            }
        }
        #expect(found == 4)
    }

    @Test func serving_RefusesLowVarietyKeys_AndSaysHowToGenerateOne() throws {
        var configuration = serving
        configuration.masterKey = String(repeating: "ab12", count: 8)
        do {
            try configuration.validateForServing()
            Issue.record("a master key of 4 distinct characters was accepted")
        } catch let error as ConfigurationError {
            #expect(error.description.hasPrefix("master_key: "))
            #expect(error.description.contains("openssl rand -hex 32"))
        }
        configuration = serving
        configuration.urlSigningKey = String(repeating: "012345678", count: 4)
        do {
            try configuration.validateForServing()
            Issue.record("a signing key of 9 distinct characters was accepted")
        } catch let error as ConfigurationError {
            #expect(error.description.hasPrefix("url_signing_key: "))
            #expect(error.description.contains("openssl rand -hex 32"))
        }
        // Ten distinct characters are enough; a public bucket needs no signing key at all.
        configuration.urlSigningKey = String(repeating: "0123456789", count: 4)
        try configuration.validateForServing()
        configuration.urlSigningKey = nil
        configuration.bucketPublic = true
        try configuration.validateForServing()
    }
}
