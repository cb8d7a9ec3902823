import Foundation
import Testing

@testable import GalleryApp

/// The client developers' aids: simulated latency and errors, from config or the master key's header.
@Suite(.serialized) struct SimulationTests {
    @Test func header_IsParsed_AndBadValuesAreRefused() throws {
        #expect(try RequestSimulation.parse("latency=800ms; error=0.1") == .init(latencyMs: 800, errorRate: 0.1))
        #expect(try RequestSimulation.parse("latency=2s") == .init(latencyMs: 2000, errorRate: 0))
        #expect(try RequestSimulation.parse(" error=1 ") == .init(latencyMs: 0, errorRate: 1))
        #expect(try RequestSimulation.parse("latency=15") == .init(latencyMs: 15, errorRate: 0))
        for bad in ["latency", "latency=-1ms", "error=2", "error=x", "speed=1", "latency=10m", "latency=61s"] {
            #expect(throws: SimulationHeaderError.self, "\(bad)") { try RequestSimulation.parse(bad) }
        }
    }

    @Test func header_IsHonouredOnlyWithTheMasterKey() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let path = "/parse/classes/Photo?limit=1"
        // Without the master key the header changes nothing.
        #expect(
            try server.request("GET", path, headers: ["X-Gallery-Simulate": "error=1"], anonymous: true).status == 200)
        #expect(
            try server.request("GET", path, headers: ["X-Gallery-Simulate": "nonsense"], anonymous: true).status == 200)
        let master = ["X-Parse-Master-Key": TestServer.masterKey]
        let failed = try server.request("GET", path, headers: master.merging(["X-Gallery-Simulate": "error=1"]) { $1 })
        #expect(failed.status == 503)
        #expect(failed.json["code"] as? Int == 1)
        #expect((failed.json["error"] as? String)?.contains("Simulated") == true)
        #expect(failed.header("Retry-After") == "1")
        let bucket = try server.request(
            "GET", "/bucket/thumbnails/x.jpg", headers: master.merging(["X-Gallery-Simulate": "error=1"]) { $1 })
        #expect(bucket.status == 503)
        #expect(bucket.text.contains("<Code>SlowDown</Code>"))
        let malformed = try server.request(
            "GET", path, headers: master.merging(["X-Gallery-Simulate": "latency=soon"]) { $1 })
        #expect(malformed.status == 400)
        #expect((malformed.json["error"] as? String)?.contains("X-Gallery-Simulate") == true)
        // Latency: the answer comes, later (how much later is for bench/, not asserted beyond the floor).
        let start = Date()
        let slow = try server.request(
            "GET", path, headers: master.merging(["X-Gallery-Simulate": "latency=300ms; error=0"]) { $1 })
        #expect(slow.status == 200)
        #expect(Date().timeIntervalSince(start) >= 0.3)
        // The server is still up and unchanged.
        #expect(try server.request("GET", path).status == 200)
    }

    @Test func configuredErrorRate_FailsRequests_AndLatencyDelaysThem() throws {
        let server = try TestServer(workers: 0) {
            $0.simulateErrorRate = 1
            $0.simulateLatencyMs = 50
        }
        defer { server.stop() }
        let r = try server.request("GET", "/parse/classes/Photo?limit=1")
        #expect(r.status == 503)
        #expect(r.header("Access-Control-Allow-Origin") == "*")
        // The master key's header overrides the configured plan (here: none), and nothing outside the API is touched.
        let exempt = try server.request(
            "GET", "/parse/classes/Photo?limit=1",
            headers: ["X-Parse-Master-Key": TestServer.masterKey, "X-Gallery-Simulate": "error=0"])
        #expect(exempt.status == 200)
        #expect(try server.request("GET", "/health", appID: nil).status == 200)
    }

    @Test func production_RefusesTheAids_AtLoad() throws {
        #expect(GalleryConfiguration().simulateLatencyMs == 0)
        #expect(GalleryConfiguration().simulateErrorRate == 0)
        for (key, value) in [("GALLERYD_SIMULATE_LATENCY_MS", "800"), ("GALLERYD_SIMULATE_ERROR_RATE", "0.1")] {
            let error = #expect(throws: ConfigurationError.self) {
                try GalleryConfiguration.load(
                    file: nil, environment: ["GALLERYD_ENVIRONMENT": "production", key: value])
            }
            #expect(error?.description.contains("production") == true)
            let development = try GalleryConfiguration.load(file: nil, environment: [key: value])
            #expect(development.simulateLatencyMs > 0 || development.simulateErrorRate > 0)
        }
        #expect(throws: ConfigurationError.self) {
            try GalleryConfiguration.load(file: nil, environment: ["GALLERYD_SIMULATE_ERROR_RATE": "1.5"])
        }
        #expect(throws: ConfigurationError.self) {
            try GalleryConfiguration.load(file: nil, environment: ["GALLERYD_ENVIRONMENT": "staging"])
        }
    }
}
