import Foundation
import Testing

@testable import GalleryApp

@Test func configuration_LayersFileThenEnvironmentThenFlags() throws {
    let file = NSTemporaryDirectory() + "galleryd-config-\(UUID().uuidString).toml"
    try "# comment\nport = 9000\nhost = \"127.0.0.1\" # trailing\nmetrics_public = true\nworkers = 3\n"
        .write(toFile: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: file) }
    let c = try GalleryConfiguration.load(
        file: file, environment: ["GALLERYD_PORT": "9100", "GALLERYD_WORKERS": "5"],
        overrides: [(key: "workers", value: "7")])
    #expect(c.host == "127.0.0.1")
    #expect(c.port == 9100)
    #expect(c.workers == 7)
    #expect(c.metricsPublic)
}

@Test func configuration_RejectsBadValues_NamingTheKey() {
    #expect(throws: ConfigurationError.invalidValue(key: "port", value: "70000", reason: "must be between 0 and 65535"))
    {
        try GalleryConfiguration.load(file: nil, environment: ["GALLERYD_PORT": "70000"])
    }
    #expect(throws: ConfigurationError.self) {
        try GalleryConfiguration.load(file: nil, environment: ["GALLERYD_METRICS_PUBLIC": "maybe"])
    }
    #expect(throws: ConfigurationError.self) {
        try GalleryConfiguration.load(file: nil, environment: ["GALLERYD_BUCKET": "../etc"])
    }
}

@Test func configuration_RejectsUnknownKeysAndSyntaxErrors_WithTheLine() throws {
    let file = NSTemporaryDirectory() + "galleryd-config-\(UUID().uuidString).toml"
    defer { try? FileManager.default.removeItem(atPath: file) }
    try "port = 1\nprot = 2\n".write(toFile: file, atomically: true, encoding: .utf8)
    #expect(throws: ConfigurationError.unknownKey(key: "prot", file: file, line: 2)) {
        try GalleryConfiguration.load(file: file, environment: [:])
    }
    try "host = \"unterminated\n".write(toFile: file, atomically: true, encoding: .utf8)
    let error = #expect(throws: ConfigurationError.self) { try GalleryConfiguration.load(file: file, environment: [:]) }
    guard case .syntax(let errorFile, let line, let reason)? = error else {
        Issue.record("expected a syntax error, got \(String(describing: error))")
        return
    }
    #expect(errorFile == file && line == 1 && !reason.isEmpty)
}

@Test func configuration_ReadsRealTOML_MultiLineAndLiteralStrings() throws {
    let file = NSTemporaryDirectory() + "galleryd-config-\(UUID().uuidString).toml"
    defer { try? FileManager.default.removeItem(atPath: file) }
    try #"""
    # galleryd
    "port" = 9_001
    public_url = 'http://photos.example'
    database_url = """
    postgresql:///gallery"""
    metrics_public = true
    """#.write(toFile: file, atomically: true, encoding: .utf8)
    let c = try GalleryConfiguration.load(file: file, environment: [:])
    #expect(c.port == 9001)
    #expect(c.publicURL == "http://photos.example")
    #expect(c.databaseURL == "postgresql:///gallery")
    #expect(c.metricsPublic)
}

@Test func configuration_RejectsTablesArraysAndDates_NamingTheKeyAndLine() throws {
    let file = NSTemporaryDirectory() + "galleryd-config-\(UUID().uuidString).toml"
    defer { try? FileManager.default.removeItem(atPath: file) }
    try "port = 1\n\n[[server]]\nport = 2\n".write(toFile: file, atomically: true, encoding: .utf8)
    #expect(throws: ConfigurationError.unknownKey(key: "server", file: file, line: 3)) {
        try GalleryConfiguration.load(file: file, environment: [:])
    }
    try "host = 1979-05-27T07:32:00Z\n".write(toFile: file, atomically: true, encoding: .utf8)
    let error = #expect(throws: ConfigurationError.self) { try GalleryConfiguration.load(file: file, environment: [:]) }
    guard case .invalidValue(let key, _, _)? = error else {
        Issue.record("expected an invalid value, got \(String(describing: error))")
        return
    }
    #expect(key == "host")
}

@Test func configuration_ServingNeedsADatabaseAndALongMasterKey() throws {
    var c = GalleryConfiguration()
    #expect(throws: ConfigurationError.self) { try c.validateForServing() }
    c.databaseURL = "postgresql:///x"
    c.masterKey = "short"
    #expect(throws: ConfigurationError.self) { try c.validateForServing() }
    c.masterKey = "k3y-of-sixteen-c"
    // The bucket is private by default: serving needs the key that signs asset URLs too.
    #expect(throws: ConfigurationError.self) { try c.validateForServing() }
    c.urlSigningKey = "signing-key-of-thirty-two-chars!"
    try c.validateForServing()
}

@Test func configuration_RenderedMasksSecrets_AndRoundTrips() throws {
    var c = GalleryConfiguration()
    c.masterKey = "supersecretmasterkey"
    let masked = c.rendered()
    #expect(!masked.contains("supersecretmasterkey"))
    let file = NSTemporaryDirectory() + "galleryd-config-\(UUID().uuidString).toml"
    defer { try? FileManager.default.removeItem(atPath: file) }
    try c.rendered(maskingSecrets: false).write(toFile: file, atomically: true, encoding: .utf8)
    #expect(try GalleryConfiguration.load(file: file, environment: [:]) == c)
}

@Test func exampleConfigFile_DocumentsEveryKey() throws {
    let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("config/galleryd.example.toml")
    let text = try String(contentsOf: example, encoding: .utf8)
    for key in ConfigurationKey.all {
        #expect(text.contains("\(key.name) ="), "config/galleryd.example.toml lacks \(key.name)")
    }
    // The example itself must load.
    _ = try GalleryConfiguration.load(file: example.path, environment: [:])
}

@Test func configuration_S3Settings_MaskTheSecret_AndRefuseBadValues() throws {
    var c = GalleryConfiguration()
    c.storage = "s3"
    c.s3Endpoint = "http://minio:9000"
    c.s3Bucket = "gallery"
    c.s3AccessKeyId = "galleryd"
    c.s3SecretAccessKey = "s3-secret-never-printed"
    let masked = c.rendered()
    #expect(!masked.contains("s3-secret-never-printed"))
    #expect(masked.contains("s3_access_key_id = \"galleryd\""))
    let loaded = try GalleryConfiguration.load(
        file: nil,
        environment: [
            "GALLERYD_STORAGE": "s3", "GALLERYD_S3_SECRET_ACCESS_KEY": "from-env",
            "GALLERYD_ASSET_DELIVERY": "redirect",
        ])
    #expect(loaded.storage == "s3")
    #expect(loaded.s3SecretAccessKey == "from-env")
    #expect(loaded.assetDelivery == "redirect")
    for (key, value) in [
        ("GALLERYD_STORAGE", "nfs"), ("GALLERYD_ASSET_DELIVERY", "cdn"), ("GALLERYD_S3_ENDPOINT", "minio:9000"),
        ("GALLERYD_S3_MULTIPART_BYTES", "1000"),
    ] {
        #expect(throws: ConfigurationError.self, "\(key)=\(value)") {
            try GalleryConfiguration.load(file: nil, environment: [key: value])
        }
    }
}
