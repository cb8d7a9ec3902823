import Logging

@testable import GalleryApp

extension TestServer {
    /// Runs `body` with a second galleryd instance on this server's database and storage: its own
    /// port, listener and caches, logging warnings only, under `label`; shut down afterwards,
    /// whether `body` passes or throws. Where a test needs two instances to agree through PostgreSQL.
    func withSecondInstance(
        label: String, configure: (inout GalleryConfiguration) -> Void = { _ in },
        _ body: (GalleryApplication) throws -> Void
    ) throws {
        var configuration = application.configuration
        configuration.port = 0
        configure(&configuration)
        var logger = Logger(label: label)
        logger.logLevel = .warning
        let second = try GalleryApplication(configuration: configuration, logger: logger)
        try second.start()
        defer {
            second.shutdown()
            second.wait()
        }
        try body(second)
    }
}
