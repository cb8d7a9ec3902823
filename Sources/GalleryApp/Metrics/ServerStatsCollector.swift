import BlobStore
import Postgres

/// The gauges and counters `/metrics` reads from the application's parts at each scrape: the
/// database pool, the blob store's bytes written, access log lines dropped, the S3 proxy's streams
/// and bytes (when proxying), and the jobs by state.
struct ServerStatsCollector: Sendable {
    let pool: PostgresPool
    let blobs: any BlobStore
    let jobs: JobQueue
    /// Streams the bucket from S3 (`asset_delivery = "proxy"`), else nil.
    let proxy: BucketProxy?
    /// Access log lines dropped so far (0 before the server starts).
    let accessLogDroppedLines: @Sendable () -> Int

    /// Every family, as the scrape now sees it. A failed read of the jobs leaves their family out.
    func collect() -> [PrometheusScrapedFamily] {
        let stats = pool.stats
        var out = [
            PrometheusScrapedFamily(
                "galleryd_db_pool_size", help: "Database connections in the pool.", type: "gauge",
                value: Double(stats.size)),
            PrometheusScrapedFamily(
                "galleryd_db_pool_in_use", help: "Database connections in use.", type: "gauge",
                value: Double(stats.inUse)),
            PrometheusScrapedFamily(
                "galleryd_db_pool_waiting", help: "Callers waiting for a database connection.", type: "gauge",
                value: Double(stats.waiting)),
            PrometheusScrapedFamily(
                "galleryd_blob_bytes_written_total", help: "Bytes written to the blob store by this process.",
                type: "counter", value: Double(blobs.bytesWritten)),
            PrometheusScrapedFamily(
                "galleryd_access_log_dropped_total",
                help: "Access log lines dropped because the output was behind.", type: "counter",
                value: Double(accessLogDroppedLines())),
        ]
        if let proxy {
            out.append(
                PrometheusScrapedFamily(
                    "galleryd_asset_proxy_streams",
                    help: "Downloads streaming from S3 through the bucket endpoint now.", type: "gauge",
                    value: Double(proxy.activeStreams)))
            out.append(
                PrometheusScrapedFamily(
                    "galleryd_asset_proxy_bytes_total", help: "Bytes read from S3 for proxied downloads.",
                    type: "counter",
                    value: Double(proxy.bytesFromStore)))
        }
        if let counts = try? jobs.counts() {
            out.append(
                PrometheusScrapedFamily(
                    "galleryd_jobs", help: "Processing jobs by state.", type: "gauge",
                    samples: counts.sorted { $0.key < $1.key }.map {
                        .init(labels: "state=\"\($0.key)\"", Double($0.value))
                    }))
        }
        return out
    }
}
