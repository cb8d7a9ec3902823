import Foundation
import Testing

@testable import GalleryApp

/// `access_log` reaches the HTTP server, and its drop counter is in /metrics from the start.
@Suite struct AccessLogConfigurationTests {
    @Test func metrics_ReportAccessLogDrops_FromZero() throws {
        let server = try TestServer(workers: 0) { $0.accessLog = "json" }
        defer { server.stop() }
        let metrics = try server.request("GET", "/metrics", headers: ["X-Parse-Master-Key": TestServer.masterKey])
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("# TYPE galleryd_access_log_dropped_total counter"))
        #expect(metrics.text.contains("\ngalleryd_access_log_dropped_total 0"))
    }

    @Test func configuration_RefusesAnUnknownAccessLogFormat() throws {
        var configuration = GalleryConfiguration()
        let key = try #require(ConfigurationKey.named("access_log"))
        #expect(throws: (any Error).self) { try key.apply("xml", to: &configuration) }
        try key.apply("off", to: &configuration)
        #expect(configuration.accessLog == "off")
    }
}
