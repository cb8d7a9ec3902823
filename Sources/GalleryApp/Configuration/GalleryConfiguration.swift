import Foundation
import HTTPServer
import Imaging

/// Every setting of galleryd, with its default. Loaded from a config file, then environment
/// variables, then command-line flags (each stronger than the one before); see `ConfigurationKey.all`
/// for the names, and `config/galleryd.example.toml` for the documented file.
public struct GalleryConfiguration: Sendable, Equatable {
    // Network
    /// Address to listen on (`0.0.0.0`, `::` for IPv4 and IPv6, `127.0.0.1`).
    public var host = "0.0.0.0"
    /// TCP port to listen on; 0 picks a free port (tests).
    public var port = 8080
    /// Base URL clients use to reach this server, for absolute file URLs; empty means `http://localhost:<port>`.
    public var publicURL = ""
    /// Where the Parse-compatible API is mounted.
    public var mountPath = "/parse"
    /// Where Parse LiveQuery WebSockets are accepted; empty means the mount path (`ws://host/parse`,
    /// what the Parse SDKs default to).
    public var liveQueryPath = ""
    /// Milliseconds a LiveQuery socket may stay open without `connect` before it is closed.
    public var liveQueryConnectTimeoutMs = 10_000
    /// Subscriptions one LiveQuery socket may hold; past it `subscribe` gets an error frame.
    public var liveQueryMaxSubscriptions = 100
    /// LiveQuery sockets one client address may hold open at once (0: no cap); past it the
    /// upgrade is answered 429. Behind a reverse proxy every client has the proxy's address.
    public var liveQueryMaxSocketsPerAddress = 50
    /// Name of the S3-style bucket path (`/<bucket>/<key>`).
    public var bucket = "bucket"

    // Keys
    /// Parse application id every `/parse` request must send.
    public var appID = "gallery"
    /// Parse REST API key; when set, reads need it (or the master key) too.
    public var restKey: String? = nil
    /// Parse master key for purging and admin endpoints; at least 16 characters.
    public var masterKey: String? = nil

    // Accounts
    /// Whether anyone with the app's keys may sign up (`POST /users`); when false (the default on a
    /// fresh install) only the master key and `galleryd users create` make accounts.
    public var signupOpen = false
    /// Days a session token stays valid after login (Parse Server's `sessionLength`, 1 year).
    public var sessionLengthDays = 365
    /// Failed logins for one username before the back-off starts (`LoginThrottle`).
    public var loginFreeFailures = 5
    /// Failed logins from one client address before the back-off starts; 0 turns the address count
    /// off (behind a reverse proxy every client has the proxy's address).
    public var loginFreeFailuresPerAddress = 20
    /// Logins, sign-ups and password changes in progress at once (hashing, or queued for the hash
    /// pool); more are answered 503 with `Retry-After`. 0: half the handler threads, which is also
    /// the most it may be, so password hashing never holds the threads everything else needs.
    public var loginConcurrency = 0

    // Storage
    /// PostgreSQL URL or conninfo string.
    public var databaseURL = ""
    /// Directory of the local blob store.
    public var storageDir = "./.data/blobs"
    /// Where blobs live: `local` (the directory `storageDir`) or `s3` (an S3-compatible bucket,
    /// the `s3*` settings; every instance then shares the same store, so any number can serve).
    public var storage = "local"
    /// The S3 endpoint URL (`http://minio:9000`, `https://s3.eu-west-1.amazonaws.com`).
    public var s3Endpoint = ""
    /// The region of the S3 signature scope.
    public var s3Region = "us-east-1"
    /// The S3 bucket holding originals, thumbnails and previews.
    public var s3Bucket = ""
    /// The S3 access key id.
    public var s3AccessKeyId = ""
    /// The S3 secret access key (masked by check-config; better set through the environment or
    /// `s3_secret_access_key_file` than written into the config file).
    public var s3SecretAccessKey: String? = nil
    /// A file holding the S3 secret access key (a Docker or systemd credential), read at start.
    public var s3SecretAccessKeyFile = ""
    /// Path-style S3 URLs (`host/bucket/key`: MinIO, Ceph, Garage) rather than virtual-hosted ones.
    public var s3PathStyle = true
    /// A prefix for every key in the bucket (e.g. `galleryd/`), so one bucket can hold several galleries.
    public var s3Prefix = ""
    /// Files larger than this are uploaded to S3 in parts (multipart upload).
    public var s3MultipartBytes = 67_108_864
    /// Size of each part of a multipart upload: S3 wants at least 5 MiB (but the last part) and at
    /// most 10,000 parts, so `maxUploadBytes` must fit in 10,000 of them.
    public var s3MultipartPartBytes = 16_777_216
    /// How the bucket endpoint serves blobs from S3: `proxy` streams them through galleryd,
    /// `redirect` answers 307 to a short-lived presigned URL on the object store.
    public var assetDelivery = "proxy"
    /// Seconds a presigned URL of `asset_delivery = "redirect"` stays valid.
    public var presignedURLSeconds = 300
    /// Downloads `asset_delivery = "proxy"` streams at once, each on its own thread; more get 503.
    public var assetProxyStreams = 64
    /// Bytes each proxied download buffers between the object store and the client (the store is
    /// read no faster than the client takes).
    public var assetProxyBufferBytes = 262_144
    /// Base URL of a CDN in front of the bucket endpoint: asset URLs become `<publicAssetURL>/<key>`;
    /// empty gives `<public_url>/<bucket>/<key>`.
    public var publicAssetURL = ""
    /// Serve `/<bucket>/<key>` to anyone who knows the key, with plain asset URLs (galleryd's
    /// behaviour before signed URLs). False (the default): every asset URL galleryd hands out is
    /// signed with `urlSigningKey` and the bucket answers 403 to any other.
    public var bucketPublic = false
    /// The HMAC-SHA256 key of signed asset URLs, at least 32 characters (`make run` generates one);
    /// required unless `bucketPublic`. Changing it invalidates every URL handed out.
    public var urlSigningKey: String? = nil
    /// Seconds of the window within which every signed URL of one key is byte-identical (the
    /// expiry is rounded up to the window's end), so clients' URL-keyed image caches keep hitting.
    public var urlWindowSeconds = 86_400
    /// Seconds a signed URL stays valid at least (at most this plus one window).
    public var urlValiditySeconds = 604_800
    /// The Flickr API's consumer secret: when set, a call carrying OAuth parameters must be signed
    /// with it (`FlickrOAuth`); nil checks no signature (docs/decisions/040).
    public var flickrAPISecret: String? = nil
    /// log2 of scrypt's N for new password hashes (`PasswordHasher`): 17 is 128 MiB of memory per
    /// hash (at r = 8); a stored hash of a lower cost is replaced at its user's next login.
    public var passwordHashCost = 17
    /// Directory of the `NNNN_name.sql` migrations; empty searches next to the binary, then
    /// `/usr/local/share/galleryd/migrations`, then `./migrations`.
    public var migrationsDir = ""
    /// Apply pending migrations when `serve` starts.
    public var migrateOnStart = true
    /// Database connections in the pool.
    public var poolSize = 10
    /// How long a request waits for a pooled connection before a 503, in milliseconds.
    public var poolTimeoutMs = 5_000
    /// Longest a single SQL statement may run, in milliseconds (bounds hostile regexes).
    public var statementTimeoutMs = 10_000

    // Workers and images
    /// In-process worker threads making thumbnails; 0 runs none (use `galleryd worker` elsewhere).
    public var workers = ProcessInfo.processInfo.activeProcessorCount
    /// Thumbnail size: its shorter edge in pixels.
    public var thumbnailSize = 400
    /// Preview size: its longer edge in pixels.
    public var previewSize = 2048
    /// JPEG quality of downscaled previews (1–100); thumbnails and previews that keep the original's size are encoded a little higher (`DerivativeSpec`).
    public var jpegQuality = 80
    /// Who quantizes the JPEG coefficients: `libjpeg`, `trellis` or `rounding` (`JPEGQuantizer`).
    public var jpegQuantizer = JPEGQuantizer.libjpeg.rawValue
    /// Largest pixel count of an upload (decompression bombs are refused before decoding).
    public var maxPixels = 100_000_000
    /// Processing attempts before a photo is marked failed.
    public var jobMaxAttempts = 5
    /// First retry delay of a failed job in milliseconds; each further attempt doubles it (capped at 10 minutes).
    public var jobRetryBaseMs = 2_000
    /// Seconds a claimed job's lease lasts; the worker renews it every third of that while the
    /// job runs (a heartbeat), so a worker killed mid-job loses it within this time, not minutes.
    public var jobLeaseSeconds = 30
    /// Hours a job keeps retrying after transient faults (full disk, I/O errors, database
    /// unavailable), backing off up to `jobTransientMaxDelaySeconds`, before its photo is marked failed.
    public var jobTransientRetryHours = 24
    /// Longest wait between retries after a transient fault, in seconds.
    public var jobTransientMaxDelaySeconds = 300
    /// Minutes after which a temporary file nobody writes to any more (a client gone mid-upload)
    /// is removed, at start and by the worker's periodic sweep; those of a process that died go at once.
    public var tmpSweepMinutes = 60
    /// Days a trashed photo or gallery stays in Recently Deleted before the worker purges it.
    public var trashRetentionDays = 30
    /// Hours an upload (`POST /files`) may wait to be attached to a photo before the worker's
    /// orphan collector removes it; a client uploads and then creates the photo within seconds.
    public var orphanGraceHours = 24

    /// Most bytes that uploads in progress may spool to disk together (each counted by the bytes
    /// it has sent, reserved a MiB ahead); more are refused with 507.
    public var maxSpoolBytes = 2_147_483_648
    /// Uploads one user may have in progress at once (0: no cap); more get 429 with `Retry-After`.
    /// A browser sends at most 6 requests to a host at once, so the web gallery never meets it.
    public var maxUploadsPerUser = 8
    /// Uploads one client address may have in progress at once (0: no cap; behind a reverse proxy
    /// every client has the proxy's address); more get 429 with `Retry-After`. The master key is exempt.
    public var maxUploadsPerAddress = 16
    /// Uploads are refused with 507 (Parse code 1) while the store's file system has less free
    /// space than this, so a full disk never takes reads, the database or derivatives with it.
    public var minFreeBytes = 1_073_741_824

    // HTTP limits
    /// Most simultaneous client connections; more wait in the listen backlog.
    public var maxConnections = 4_096
    /// Event-loop threads reading and writing sockets (epoll); one per core is right for a
    /// dedicated machine, fewer leaves cores to workers and the database.
    public var eventLoops = ProcessInfo.processInfo.activeProcessorCount
    /// How the event loops wait for sockets: "epoll" (Linux only, the default there, chosen by
    /// measurement in docs/decisions/004-epoll-default-on-linux.md) or "dispatch" (the default elsewhere).
    public var ioBackend = HTTPIOBackend.platformDefault.rawValue
    /// Threads running request handlers (they may wait on the database); 0 means as many as
    /// `poolSize`. More threads than pooled connections only queue for a connection, and the
    /// waiting costs context switches: on 2 cores, 32 threads over 10 connections served 30%
    /// fewer manifest pages than 10 over 10 (bench/manifest.sh).
    public var handlerThreads = 0

    /// The handler thread count in effect (`handlerThreads`, or `poolSize` for 0).
    public var effectiveHandlerThreads: Int { handlerThreads > 0 ? handlerThreads : poolSize }
    /// Longest request line, in bytes (414 beyond).
    public var maxRequestLineBytes = 8_192
    /// Largest header section, in bytes (431 beyond).
    public var maxHeaderBytes = 32_768
    /// Most header fields in one request (431 beyond).
    public var maxHeaderCount = 100
    /// Largest JSON request body, in bytes (413 beyond).
    public var maxBodyBytes = 1_048_576
    /// Largest upload, in bytes (413 beyond).
    public var maxUploadBytes = 104_857_600
    /// Deepest JSON nesting accepted in bodies and `where`.
    public var maxJSONDepth = 16
    /// Cap on a query's `limit`.
    public var maxQueryLimit = 1_000
    /// Largest `skip`: deep offsets read and discard every skipped row, so past this the query is
    /// refused (102) with a pointer to the keyset cursor.
    public var maxQuerySkip = 10_000
    /// Expensive queries (an unanchored `$regex`, a `skip` over 1,000) running at once;
    /// more wait for a slot, so they cannot hold every pooled connection and starve cheap pages.
    public var expensiveQueryLimit = 2
    /// Longest an expensive query's statements may run, in milliseconds (shorter than `statementTimeoutMs`).
    public var expensiveStatementTimeoutMs = 3_000
    /// Time allowed to receive a request's head, in milliseconds (slowloris clients are cut off).
    public var headerTimeoutMs = 10_000
    /// Time an idle keep-alive connection is kept, in milliseconds.
    public var idleTimeoutMs = 30_000
    /// Time a request body may stall without progress, in milliseconds.
    public var bodyTimeoutMs = 30_000
    /// Slowest average upload rate, in bytes per second, after the grace period (0: none) → 408.
    public var minBodyRate = 240
    /// Slowest average rate a client may read a response at, in bytes per second, after the grace
    /// period (0: none); slower clients are disconnected.
    public var minResponseRate = 240
    /// Time a body or response gets on top of what the minimum rates allow, in milliseconds.
    public var rateGraceMs = 5_000
    /// Time in-flight requests get to finish on shutdown, in milliseconds.
    public var drainTimeoutMs = 10_000

    // Operations
    /// Serve `/metrics` without the master key.
    public var metricsPublic = false
    /// Whether requests without a session read public galleries (ACL `"*":{"read":true}`), their
    /// items and those items' photos. Off: no session reads nothing.
    public var publicRead = false
    /// Whether a caller without the master key may create a class by saving to it (Parse
    /// Server's `allowClientClassCreation`; off, the default: 119). Such a class is open to everyone.
    public var allowClientClassCreation = false
    /// Read-only classes over Photo (`[[views]]`, docs/decisions/038); none by default.
    public var views: [ViewDefinition] = []
    /// Log level: trace, debug, info, notice, warning, error, critical.
    public var logLevel = "info"
    /// `production` or `development`: production refuses the client developers' aids
    /// (`simulateLatencyMs`, `simulateErrorRate`) at load, so they cannot be left on by mistake.
    public var environment = "development"

    // Browsers and client developers
    /// Origins allowed to call the API from a browser (`Access-Control-Allow-Origin`), comma
    /// separated; `*` (the default, like Parse Server) allows any, since every call needs the keys anyway.
    public var corsOrigins = "*"
    /// Directory of the web gallery served at `/`; empty finds `web/` beside the source tree or the binary.
    public var webRoot = ""
    /// Delay added to every `/parse` and bucket request, in milliseconds, to test clients against a
    /// slow server (0: off; refused when `environment` is `production`).
    public var simulateLatencyMs = 0
    /// Share of `/parse` and bucket requests answered with a simulated error (0: off, 1: all;
    /// refused when `environment` is `production`).
    public var simulateErrorRate = 0.0

    // Access log and the bucket's open-file cache
    /// Recently served blobs kept open (descriptor and stat) for the bucket route; 0 turns it off.
    public var openFileCache = 1000
    /// Bytes of rendered find and count answers kept by their ETag, so an unchanged page is
    /// answered without the database (`ManifestCache`); 0 turns it off.
    public var manifestCacheBytes = 32 * 1024 * 1024
    /// Bytes of rendered display sizes kept in the blob store (`SizeCache`), least recently used
    /// removed first; the newest rendition always stays, so 0 keeps one.
    public var sizeCacheBytes = 1 << 30
    /// Access log format: `text`, `json` (one object per line) or `off`; independent of `logLevel`.
    public var accessLog = "text"
    /// Bytes of access log each event loop buffers; past it lines are dropped and counted.
    public var accessLogBuffer = 1 << 20

    /// The defaults.
    public init() {}

    /// The public base URL, defaulting to `http://localhost:<port>`, without a trailing slash.
    public var effectivePublicURL: String {
        var url = publicURL.isEmpty ? "http://localhost:\(port)" : publicURL
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}
