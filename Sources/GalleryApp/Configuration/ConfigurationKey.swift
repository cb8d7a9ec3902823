import Foundation
import HTTPServer
import Imaging

/// One setting as the outside world names it: its key in the config file, its environment
/// variable, and how to read and print it. The single table `all` drives file loading,
/// environment overrides, `check-config` and the example file, so they cannot drift apart.
public struct ConfigurationKey: Sendable {
    /// The key in the config file (`snake_case`).
    public let name: String
    /// The environment variable that overrides it.
    public let environmentVariable: String
    /// One line saying what it does.
    public let summary: String
    /// Whether `check-config` masks the value.
    public let isSecret: Bool
    let apply: @Sendable (inout GalleryConfiguration, String) throws -> Void
    let render: @Sendable (GalleryConfiguration) -> String?

    /// Sets the value from its textual form (a file value without quotes, an env var, a flag).
    public func apply(_ text: String, to configuration: inout GalleryConfiguration) throws {
        try apply(&configuration, text)
    }

    /// The value as written in a config file (`"text"`, `42`, `true`), or nil when unset.
    public func render(_ configuration: GalleryConfiguration) -> String? { render(configuration) }

    /// Every setting, in the order the example file documents them.
    public static let all: [ConfigurationKey] = [
        .string("host", \.host, "Address to listen on: 0.0.0.0 (IPv4), :: (IPv4 and IPv6), 127.0.0.1 (local only)."),
        .int("port", \.port, "TCP port to listen on.", range: 0...65535),
        .string(
            "public_url", \.publicURL,
            "Base URL clients reach this server at, for absolute file URLs (default http://localhost:<port>).",
            validate: {
                $0.isEmpty || $0.hasPrefix("http://") || $0.hasPrefix("https://")
                    ? nil : "must start with http:// or https://"
            }),
        .string(
            "mount_path", \.mountPath, "Where the Parse-compatible API is mounted.",
            validate: { $0.hasPrefix("/") && !$0.hasSuffix("/") ? nil : "must start with / and not end with /" }),
        .string(
            "live_query_path", \.liveQueryPath,
            "Where Parse LiveQuery WebSockets are accepted (empty: the mount path).",
            validate: {
                $0.isEmpty || ($0.hasPrefix("/") && !$0.hasSuffix("/"))
                    ? nil : "must be empty, or start with / and not end with /"
            }),
        .int(
            "live_query_connect_timeout_ms", \.liveQueryConnectTimeoutMs,
            "A LiveQuery socket without connect within this many ms is closed.", range: 100...600_000),
        .int(
            "live_query_max_subscriptions", \.liveQueryMaxSubscriptions,
            "Subscriptions one LiveQuery socket may hold (an error frame past it).", range: 1...100_000),
        .int(
            "live_query_max_sockets_per_address", \.liveQueryMaxSocketsPerAddress,
            "LiveQuery sockets one client address may hold open (429 past it; 0: no cap).", range: 0...1_000_000),
        .string(
            "bucket", \.bucket, "Bucket name in /<bucket>/<key> asset URLs.",
            validate: { b in
                b.range(of: "^[a-z0-9][a-z0-9.-]{1,62}$", options: .regularExpression) != nil
                    ? nil : "must be 2-63 characters of a-z, 0-9, '.', '-'"
            }),
        .string(
            "app_id", \.appID, "Parse application id (X-Parse-Application-Id) every request must send.",
            validate: { $0.isEmpty ? "must not be empty" : nil }),
        .secret(
            "rest_key", \.restKey,
            "Parse REST API key (X-Parse-REST-API-Key); when set, every request needs it or the master key."),
        .secret(
            "master_key", \.masterKey,
            "Parse master key (X-Parse-Master-Key) for purging, metrics and admin; at least 16 characters."),
        .bool(
            "signup_open", \.signupOpen,
            "Anyone with the app's keys may sign up (POST /parse/users); false: only the master key and galleryd users create."
        ),
        .int(
            "session_length_days", \.sessionLengthDays, "Days a session token stays valid after login.", range: 1...3650
        ),
        .int(
            "login_free_failures", \.loginFreeFailures,
            "Failed logins for one username before the back-off (1 s doubling to 15 min, 429) starts.", range: 1...1000),
        .int(
            "login_concurrency", \.loginConcurrency,
            "Logins, sign-ups and password changes in progress at once; more get 503 with Retry-After (0: half of handler_threads, also the most allowed).",
            range: 0...1024),
        .int(
            "login_free_failures_per_address", \.loginFreeFailuresPerAddress,
            "Failed logins from one client address before its back-off starts (0: not counted; set 0 behind a reverse proxy).",
            range: 0...100_000),
        .string("database_url", \.databaseURL, env: "DATABASE_URL", "PostgreSQL URL or conninfo string."),
        .string("storage_dir", \.storageDir, "Directory of the local blob store (originals, thumbnails, previews)."),
        .string(
            "storage", \.storage,
            "Where blobs live: local (storage_dir) or s3 (the s3_* settings; lets several instances share one store).",
            validate: { ["local", "s3"].contains($0) ? nil : "must be local or s3" }),
        .string(
            "s3_endpoint", \.s3Endpoint, "S3 endpoint URL (http://minio:9000, https://s3.eu-west-1.amazonaws.com).",
            validate: {
                $0.isEmpty || $0.hasPrefix("http://") || $0.hasPrefix("https://")
                    ? nil : "must start with http:// or https://"
            }),
        .string("s3_region", \.s3Region, "Region of the S3 signature scope (us-east-1 for most non-AWS stores)."),
        .string("s3_bucket", \.s3Bucket, "S3 bucket holding originals, thumbnails and previews."),
        .string("s3_access_key_id", \.s3AccessKeyId, "S3 access key id."),
        .secret(
            "s3_secret_access_key", \.s3SecretAccessKey,
            "S3 secret access key; prefer GALLERYD_S3_SECRET_ACCESS_KEY or s3_secret_access_key_file."),
        .string(
            "s3_secret_access_key_file", \.s3SecretAccessKeyFile,
            "File holding the S3 secret access key (a Docker or systemd credential)."),
        .bool(
            "s3_path_style", \.s3PathStyle,
            "Path-style S3 URLs (host/bucket/key: MinIO, Ceph, Garage) instead of virtual-hosted ones."),
        .string("s3_prefix", \.s3Prefix, "Prefix of every key in the bucket (e.g. galleryd/)."),
        .int(
            "s3_multipart_bytes", \.s3MultipartBytes, "Files larger than this go to S3 as a multipart upload.",
            range: 5_242_880...5_368_709_120),
        .int(
            "s3_multipart_part_bytes", \.s3MultipartPartBytes,
            "Size of each part of a multipart upload (S3: at least 5 MiB, at most 10,000 parts, so max_upload_bytes / this must be 10,000 or less).",
            range: 5_242_880...5_368_709_120),
        .string(
            "asset_delivery", \.assetDelivery,
            "Bucket endpoint with S3 storage: proxy (stream through galleryd) or redirect (307 to a presigned URL).",
            validate: { ["proxy", "redirect"].contains($0) ? nil : "must be proxy or redirect" }),
        .int(
            "presigned_url_seconds", \.presignedURLSeconds,
            "Seconds a presigned URL of asset_delivery = redirect stays valid.", range: 1...604_800),
        .int(
            "asset_proxy_streams", \.assetProxyStreams,
            "Downloads asset_delivery = proxy streams from S3 at once (a thread each); more are answered 503 SlowDown.",
            range: 1...100_000),
        .int(
            "asset_proxy_buffer_bytes", \.assetProxyBufferBytes,
            "Bytes each proxied download buffers between S3 and the client; S3 is read no faster than the client takes.",
            range: 16_384...67_108_864),
        .string(
            "public_asset_url", \.publicAssetURL,
            "Base URL of a CDN in front of the bucket: asset URLs become <public_asset_url>/<key> (empty: <public_url>/<bucket>/<key>).",
            validate: {
                $0.isEmpty || $0.hasPrefix("http://") || $0.hasPrefix("https://")
                    ? nil : "must start with http:// or https://"
            }),
        .bool(
            "bucket_public", \.bucketPublic,
            "Serve /<bucket>/<key> to anyone with plain URLs; false (default): asset URLs are signed and the bucket refuses others (403)."
        ),
        .secret(
            "url_signing_key", \.urlSigningKey,
            "HMAC-SHA256 key of signed asset URLs, at least 32 characters; required unless bucket_public. `make run` generates one."
        ),
        .int(
            "url_window_seconds", \.urlWindowSeconds,
            "Signed asset URLs of one key are identical within a window of this many seconds (client image caches keep hitting).",
            range: 60...2_592_000),
        .int(
            "url_validity_seconds", \.urlValiditySeconds,
            "Seconds a signed asset URL stays valid at least (at most this plus one window).", range: 60...31_536_000),
        .secret(
            "flickr_api_secret", \.flickrAPISecret,
            "Flickr API consumer secret: when set, a /services/rest/ call carrying OAuth parameters must be signed with it (HMAC-SHA1; else Flickr's 96/97). Unset: signatures are not checked."
        ),
        .int(
            "password_hash_cost", \.passwordHashCost,
            "log2 of scrypt's N for new password hashes (17: 128 MiB per hash); weaker stored hashes are replaced at the next login. Lower only for tests.",
            range: 10...18),
        .string(
            "migrations_dir", \.migrationsDir,
            "Directory of the NNNN_name.sql migrations (empty: next to the binary, /usr/local/share/galleryd/migrations, ./migrations)."
        ),
        .bool("migrate_on_start", \.migrateOnStart, "Apply pending migrations when serve starts."),
        .int("pool_size", \.poolSize, "Database connections in the pool.", range: 1...1000),
        .int(
            "pool_timeout_ms", \.poolTimeoutMs, "Wait for a pooled connection before answering 503, in ms.",
            range: 1...600_000),
        .int(
            "statement_timeout_ms", \.statementTimeoutMs, "Longest a single SQL statement may run, in ms.",
            range: 100...3_600_000),
        .int(
            "workers", \.workers,
            "In-process worker threads making thumbnails (0: none; run galleryd worker elsewhere).", range: 0...256),
        .int("thumbnail_size", \.thumbnailSize, "Thumbnail shorter edge, in pixels.", range: 16...4096),
        .int("preview_size", \.previewSize, "Preview longer edge, in pixels.", range: 64...16384),
        .int(
            "jpeg_quality", \.jpegQuality,
            "JPEG quality of downscaled previews; thumbnails and previews that keep the original's size are encoded 2 higher, and PNG, WebP, HEIC and AVIF originals' derivatives take per-format steps from these (docs/architecture.md).",
            range: 1...100),
        .string(
            "jpeg_quantizer", \.jpegQuantizer,
            "Who quantizes thumbnails and previews: libjpeg (its compressor, except a HEIC's or AVIF's flat thumbnails, which take trellis with its own step: decision 063), trellis (rate-distortion choice of the AC coefficients, see docs/architecture.md), rounding (the trellis path rounding like libjpeg: libjpeg's bytes, for every output) or zeroBias (that path rounding with a dead zone widest in smooth blocks: measured, not kept, decision 070).",
            validate: {
                JPEGQuantizer(rawValue: $0) != nil
                    ? nil : "must be one of \(JPEGQuantizer.allCases.map(\.rawValue).joined(separator: ", "))"
            }),
        .int(
            "max_pixels", \.maxPixels, "Largest pixel count of an upload (decompression bombs).",
            range: 1...1_000_000_000),
        .int(
            "job_max_attempts", \.jobMaxAttempts, "Processing attempts before a photo is marked failed.", range: 1...100
        ),
        .int(
            "job_retry_base_ms", \.jobRetryBaseMs,
            "First retry delay of a failed job in ms; doubles per attempt, capped at 10 minutes.", range: 1...3_600_000),
        .int(
            "job_lease_seconds", \.jobLeaseSeconds,
            "Seconds a claimed job's lease lasts; renewed every third of it while the job runs.", range: 3...86_400),
        .int(
            "job_transient_retry_hours", \.jobTransientRetryHours,
            "Hours a job keeps retrying after transient faults (full disk, I/O, database down).", range: 0...8760),
        .int(
            "job_transient_max_delay_seconds", \.jobTransientMaxDelaySeconds,
            "Longest wait between retries after a transient fault, in seconds.", range: 1...86_400),
        .int(
            "tmp_sweep_minutes", \.tmpSweepMinutes,
            "Minutes after which a temporary file nobody writes to is removed (those of a process that died go at once).",
            range: 1...10_080),
        .int(
            "trash_retention_days", \.trashRetentionDays, "Days trashed photos and galleries are kept before purging.",
            range: 0...3650),
        .int(
            "orphan_grace_hours", \.orphanGraceHours,
            "Hours an upload may wait to be attached to a photo before it is collected.", range: 0...87_600),
        .int("max_connections", \.maxConnections, "Most simultaneous client connections.", range: 1...1_000_000),
        .int(
            "event_loops", \.eventLoops, "Event-loop threads reading and writing sockets (default: one per core).",
            range: 1...256),
        .string(
            "io_backend", \.ioBackend,
            "How event loops wait for sockets: epoll (Linux only; the default there) or dispatch (the default elsewhere); see docs/architecture.md.",
            validate: {
                HTTPIOBackend.available.map(\.rawValue).contains($0)
                    ? nil : "must be one of \(HTTPIOBackend.available.map(\.rawValue).joined(separator: ", "))"
            }),
        .int(
            "handler_threads", \.handlerThreads, "Threads running request handlers (0: as many as pool_size).",
            range: 0...1024),
        .int(
            "max_request_line_bytes", \.maxRequestLineBytes, "Longest request line (414 beyond).",
            range: 256...1_048_576),
        .int("max_header_bytes", \.maxHeaderBytes, "Largest header section (431 beyond).", range: 1024...1_048_576),
        .int("max_header_count", \.maxHeaderCount, "Most header fields (431 beyond).", range: 8...10_000),
        .int("max_body_bytes", \.maxBodyBytes, "Largest JSON request body (413 beyond).", range: 1024...1_073_741_824),
        .int("max_upload_bytes", \.maxUploadBytes, "Largest upload (413 beyond).", range: 1024...68_719_476_736),
        .int(
            "max_spool_bytes", \.maxSpoolBytes,
            "Most bytes uploads in progress may spool together, each counted by the bytes it has sent (507 beyond).",
            range: 1024...1_099_511_627_776),
        .int(
            "max_uploads_per_user", \.maxUploadsPerUser,
            "Uploads one user may have in progress at once; more get 429 with Retry-After (0: no cap).",
            range: 0...100_000),
        .int(
            "max_uploads_per_address", \.maxUploadsPerAddress,
            "Uploads one client address may have in progress at once; more get 429 with Retry-After (0: no cap; the master key is exempt).",
            range: 0...100_000),
        .int(
            "min_free_bytes", \.minFreeBytes,
            "Uploads get 507 while the store's file system has less free space than this.",
            range: 0...1_125_899_906_842_624),
        .int("max_json_depth", \.maxJSONDepth, "Deepest JSON nesting in bodies and where.", range: 2...256),
        .int("max_query_limit", \.maxQueryLimit, "Cap on a query's limit.", range: 1...100_000),
        .int(
            "max_query_skip", \.maxQuerySkip, "Largest skip (102 beyond; page with the keyset cursor).",
            range: 0...100_000_000),
        .int(
            "expensive_query_limit", \.expensiveQueryLimit,
            "Expensive queries (unanchored $regex, skip over 1000, counted scans) running at once.", range: 1...1000),
        .int(
            "expensive_statement_timeout_ms", \.expensiveStatementTimeoutMs,
            "Longest an expensive query's statements may run, in ms.", range: 100...3_600_000),
        .int("header_timeout_ms", \.headerTimeoutMs, "Time to receive a request head, in ms.", range: 100...600_000),
        .int("idle_timeout_ms", \.idleTimeoutMs, "Idle keep-alive time, in ms.", range: 100...3_600_000),
        .int("body_timeout_ms", \.bodyTimeoutMs, "Time a body may stall, in ms.", range: 100...3_600_000),
        .int(
            "min_body_rate", \.minBodyRate, "Slowest average upload rate in bytes/s after the grace period (0: none).",
            range: 0...1_073_741_824),
        .int(
            "min_response_rate", \.minResponseRate,
            "Slowest average response read rate in bytes/s after the grace period (0: none).", range: 0...1_073_741_824),
        .int(
            "rate_grace_ms", \.rateGraceMs, "Time a transfer gets on top of the minimum rates, in ms.",
            range: 1000...3_600_000),
        .int(
            "drain_timeout_ms", \.drainTimeoutMs, "Time in-flight requests get on shutdown, in ms.", range: 0...600_000),
        .bool("metrics_public", \.metricsPublic, "Serve /metrics without the master key."),
        .bool(
            "public_read", \.publicRead,
            "Requests without a session read public galleries (ACL \"*\" read), their items and photos."),
        .bool(
            "allow_client_class_creation", \.allowClientClassCreation,
            "Saving to a class that does not exist creates it (open to everyone) without the master key; off: 119."),
        .string(
            "log_level", \.logLevel, "trace, debug, info, notice, warning, error or critical.",
            validate: {
                ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains($0)
                    ? nil : "not a log level"
            }),
        .string(
            "environment", \.environment,
            "production or development; production refuses simulate_latency_ms and simulate_error_rate.",
            validate: { ["production", "development"].contains($0) ? nil : "must be production or development" }),
        .string(
            "cors_origins", \.corsOrigins,
            "Origins browsers may call the API from (Access-Control-Allow-Origin), comma separated; * allows any.",
            validate: { CORSPolicy.problem(inOrigins: $0) }),
        .string(
            "web_root", \.webRoot,
            "Directory of the web gallery served at / (empty: web/ beside the source tree or the binary)."),
        .int(
            "simulate_latency_ms", \.simulateLatencyMs,
            "Delay added to every API and bucket request, in ms, for testing clients (0: off; not in production).",
            range: 0...60_000),
        .double(
            "simulate_error_rate", \.simulateErrorRate,
            "Share of API and bucket requests answered with a simulated error, 0 to 1 (0: off; not in production).",
            range: 0...1),
        .int(
            "open_file_cache", \.openFileCache, "Recently served blobs kept open for the bucket route (0: off).",
            range: 0...100_000),
        .int(
            "manifest_cache_bytes", \.manifestCacheBytes,
            "Bytes of rendered find and count answers (and Flickr API answers) kept, answered without the database until a change (0: off).",
            range: 0...4_294_967_296),
        .int(
            "size_cache_bytes", \.sizeCacheBytes,
            "Bytes of rendered display sizes (Flickr's ladder, sizes/ in the blob store) kept, least recently used removed first.",
            range: 0...1_099_511_627_776),
        .string(
            "access_log", \.accessLog, "Access log format: text, json (one object per line) or off.",
            validate: { ["text", "json", "off"].contains($0) ? nil : "not text, json or off" }),
        .int(
            "access_log_buffer", \.accessLogBuffer,
            "Access log bytes buffered per event loop before lines are dropped (and counted).", range: 4096...16_777_216
        ),
    ]

    /// The key with that file name, if any.
    public static func named(_ name: String) -> ConfigurationKey? { all.first { $0.name == name } }
}
