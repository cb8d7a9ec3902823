import BlobStore
import Foundation
import HTTPServer
import Imaging
import Logging
import Postgres
import Synchronization

/// The whole server, assembled from a configuration: database pool, blob store, routes,
/// HTTP server and in-process workers. `galleryd serve` and the tests build it with the same
/// `init`, so what the tests exercise is what runs in production.
// @unchecked: `liveQuery` and `workers` are set in `init`, `server` once in `start()` before it serves.
public final class GalleryApplication: @unchecked Sendable {
    /// The effective configuration.
    public let configuration: GalleryConfiguration
    /// The root logger.
    public let logger: Logger
    /// The database pool.
    public let pool: PostgresPool
    /// The local directory store (`storage_dir`): where uploads spool, and where originals and
    /// derivatives live when `storage = "local"`.
    public let store: LocalBlobStore
    /// Where originals and derivatives live: `store`, or the S3 bucket when `storage = "s3"`.
    public let blobs: any BlobStore
    /// Metrics served at `/metrics`.
    public let metrics: GalleryMetrics
    /// Streams the bucket's objects from S3 (`storage = "s3"`, `asset_delivery = "proxy"`), else nil.
    let bucketProxy: BucketProxy?
    /// Every route.
    public let router: HTTPRouter
    /// Upload and photo creation.
    public let uploads: UploadService
    /// The processing job queue.
    public let jobs: JobQueue
    /// Permanent deletion and retention.
    public let trash: TrashService
    /// Which uploads may spool their bodies (free disk space, the spool budget).
    public let uploadAdmission: UploadAdmission
    /// The JavaScript SDK's JSON uploads being read and decoded at once (`ParseRoutes.jsonUploadsAtOnce`).
    let jsonUploadSlots: HandlerSlots
    /// Slots for expensive queries, so they cannot hold every pooled connection.
    public let expensiveQueries: ExpensiveQueryGate
    /// Schema migrations.
    public let migrator: Migrator
    /// Each class's change sequence, kept in memory for the ETags of find and count.
    public let classChanges: ClassChangeSequences
    /// Finds' tag inputs and rendered answers (`manifest_cache_bytes`).
    let manifestCache: ManifestCache
    /// Answers to creates sent with `X-Parse-Request-Id`, and the timer deleting expired ones.
    let idempotency: ParseRequestIdempotency
    /// Signs the asset URLs handed out and checks them at the bucket; nil when `bucket_public`
    /// is set, or when no usable `url_signing_key` is (the bucket then refuses every request).
    public let assetSigner: AssetURLSigner?
    /// Session tokens to callers (`ParseCaller`), with a few seconds' memory.
    public let sessions: SessionAuthenticator
    /// Accounts and sessions: sign-up, login (throttled), logout, password changes.
    public let accounts: AccountService
    /// Parse LiveQuery over WebSocket at `/parse`, fed by the database's change notifications.
    public internal(set) var liveQuery: LiveQueryServer!
    /// Display sizes (Flickr's ladder): URLs, and renditions made on first request.
    public private(set) var sizes: SizeService!
    /// In-process workers (nil when `workers` is 0).
    public private(set) var workers: WorkerPool?
    private var server: HTTPServer?
    /// `publicURL` once the server has bound its port (it cannot change after that).
    private let boundPublicURL = Mutex<String?>(nil)
    /// Set by the first `shutdown()`.
    private let shuttingDown = Mutex(false)
    private let stopped = DispatchSemaphore(value: 0)

    /// Assembles the application; opens nothing on the network yet (see `start`).
    public init(configuration: GalleryConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        store = try LocalBlobStore(root: configuration.storageDir, openFileCacheEntries: configuration.openFileCache)
        // What a killed process left, and what stalled past tmp_sweep_minutes; the worker repeats it.
        let removed = store.sweepTemporaryFiles(olderThan: Double(configuration.tmpSweepMinutes) * 60)
        if removed > 0 { logger.notice("removed abandoned temporary files", metadata: ["count": "\(removed)"]) }
        blobs = try Self.makeBlobStore(configuration: configuration, local: store)
        if !configuration.bucketPublic, let key = configuration.urlSigningKey,
            key.count >= AssetURLSigner.minimumKeyLength
        {
            assetSigner = AssetURLSigner(
                key: key, bucket: configuration.bucket, windowSeconds: configuration.urlWindowSeconds,
                validitySeconds: configuration.urlValiditySeconds)
        } else {
            assetSigner = nil
        }
        pool = PostgresPool(
            configuration: PostgresPoolConfiguration(
                url: configuration.databaseURL, size: configuration.poolSize,
                acquireTimeout: Double(configuration.poolTimeoutMs) / 1000,
                statementTimeout: Double(configuration.statementTimeoutMs) / 1000))
        migrator = Migrator(
            pool: pool,
            directory: URL(fileURLWithPath: Self.migrationsDirectory(configured: configuration.migrationsDir)))
        metrics = GalleryMetrics()
        if let remote = blobs as? S3BlobStore, configuration.assetDelivery == "proxy" {
            bucketProxy = BucketProxy(
                remote: remote, maxStreams: configuration.assetProxyStreams,
                bufferBytes: configuration.assetProxyBufferBytes,
                logger: logger)
        } else {
            bucketProxy = nil
        }
        let limits = ImageLimits(maxPixels: configuration.maxPixels)
        uploads = UploadService(pool: pool, store: blobs, limits: limits, logger: logger)
        classChanges = ClassChangeSequences(pool: pool, databaseURL: configuration.databaseURL, logger: logger)
        var jobs = JobQueue(
            pool: pool, leaseSeconds: configuration.jobLeaseSeconds, retryBaseMs: configuration.jobRetryBaseMs,
            maxAttempts: configuration.jobMaxAttempts)
        jobs.transientRetrySeconds = Double(configuration.jobTransientRetryHours) * 3600
        jobs.transientMaxDelay = Double(configuration.jobTransientMaxDelaySeconds)
        jobs.classChanges = classChanges
        self.jobs = jobs
        var uploadLimits = UploadAdmission.Limits(
            maxSpoolBytes: configuration.maxSpoolBytes, minFreeBytes: Int64(configuration.minFreeBytes),
            maxUploadBytes: configuration.maxUploadBytes)
        uploadLimits.maxPerUser = configuration.maxUploadsPerUser
        uploadLimits.maxPerAddress = configuration.maxUploadsPerAddress
        uploadAdmission = UploadAdmission(store: store, limits: uploadLimits)
        jsonUploadSlots = HandlerSlots(
            configured: ParseRoutes.jsonUploadsAtOnce, handlerThreads: configuration.effectiveHandlerThreads)
        expensiveQueries = ExpensiveQueryGate(
            slots: configuration.expensiveQueryLimit, waitTimeout: Double(configuration.poolTimeoutMs) / 1000,
            statementTimeoutMs: configuration.expensiveStatementTimeoutMs)
        trash = TrashService(pool: pool, store: blobs, logger: logger)
        manifestCache = ManifestCache(maxBytes: configuration.manifestCacheBytes)
        idempotency = ParseRequestIdempotency(pool: pool)
        sessions = SessionAuthenticator(sessions: SessionRepository(pool: pool))
        accounts = AccountService(
            pool: pool, authenticator: sessions, configuration: configuration, metrics: metrics, logger: logger,
            hasher: PasswordHasher(cost: configuration.passwordHashCost), classChanges: classChanges)
        router = HTTPRouter()
        sizes = SizeService(
            repository: SizeRepository(pool: pool), store: blobs, spool: store,
            spec: DerivativeSpec(
                quality: configuration.jpegQuality,
                quantizer: JPEGQuantizer(rawValue: configuration.jpegQuantizer) ?? .libjpeg),
            limits: limits,
            cacheBytes: Int64(configuration.sizeCacheBytes), registry: metrics.registry, logger: logger,
            makeEncoder: { [unowned self] in self.makeEncoder() })
        if configuration.workers > 0 {
            workers = makeWorkerPool(threads: configuration.workers)
        }
        registerRoutes()
        let collector = ServerStatsCollector(
            pool: pool, blobs: blobs, jobs: jobs, proxy: bucketProxy,
            accessLogDroppedLines: { [weak self] in self?.accessLogDroppedLines ?? 0 })
        metrics.registry.addCollector { collector.collect() }
    }

    /// A worker pool over this application's queue, for `serve` (in-process) and `galleryd worker`.
    public func makeWorkerPool(threads: Int) -> WorkerPool {
        let processor = PhotoProcessor(
            pool: pool, store: blobs, spool: store,
            spec: DerivativeSpec(
                thumbnailShortEdge: configuration.thumbnailSize, previewLongEdge: configuration.previewSize,
                quality: configuration.jpegQuality,
                quantizer: JPEGQuantizer(rawValue: configuration.jpegQuantizer) ?? .libjpeg),
            limits: ImageLimits(maxPixels: configuration.maxPixels),
            maxOriginalBytes: Int64(configuration.maxUploadBytes))
        var settings = WorkerPool.Settings(threads: threads, trashRetentionDays: configuration.trashRetentionDays)
        settings.pollInterval = 2
        settings.orphanGraceHours = configuration.orphanGraceHours
        settings.tmpSweepAge = Double(configuration.tmpSweepMinutes) * 60
        settings.tmpSweepInterval = min(600, settings.tmpSweepAge / 2)
        return WorkerPool(
            settings: settings, queue: jobs, processor: processor, trash: trash, databaseURL: configuration.databaseURL,
            logger: logger, metrics: metrics,
            backfills: [
                ThumbHashBackfill(
                    pool: pool, store: blobs, spoolDirectory: store.spoolDirectory,
                    limits: ImageLimits(maxPixels: configuration.maxPixels), logger: logger),
                CameraBackfill(
                    pool: pool, store: blobs, spoolDirectory: store.spoolDirectory,
                    limits: ImageLimits(maxPixels: configuration.maxPixels),
                    maxOriginalBytes: Int64(configuration.maxUploadBytes), logger: logger),
            ])
    }

    /// Applies pending migrations; returns the names applied.
    @discardableResult
    public func migrate() throws -> [String] {
        let applied = try migrator.migrate()
        // An upgraded single-tenant install: ownerless rows go to the first admin once there is one.
        let assigned = try OwnershipRepository(pool: pool).assignOwnerlessRowsToFirstAdmin()
        if !assigned.isEmpty {
            logger.notice(
                "gave ownerless rows to the first admin",
                metadata: [
                    "admin": "\(assigned.adminId ?? "")", "photos": "\(assigned.photos)",
                    "galleries": "\(assigned.galleries)",
                    "galleryItems": "\(assigned.galleryItems)",
                ])
        }
        return applied
    }

    /// Migrates (unless configured not to), starts listening and starts the workers.
    public func start(listenFileDescriptor: Int32? = nil) throws {
        try prepareToServe()
        let http = HTTPServerConfiguration(
            configuration, listenFileDescriptor: listenFileDescriptor, temporaryDirectory: store.spoolDirectory)
        let server = HTTPServer(configuration: http, router: router, logger: logger, observer: metrics)
        try server.start()
        self.server = server
        // Fixed from now on (the port is bound): made once, not per find's ETag.
        let bound =
            configuration.publicURL.isEmpty ? "http://localhost:\(server.port)" : configuration.effectivePublicURL
        boundPublicURL.withLock { $0 = bound }
        startBackgroundServices()
        logger.notice(
            "galleryd listening",
            metadata: [
                "host": "\(configuration.host)", "port": "\(server.port)", "publicURL": "\(publicURL)",
            ])
    }

    /// Everything `start` does but listen, for tests that call the routes in process (`router`):
    /// migrations, the change sequences, LiveQuery's feed and the workers.
    func startWithoutListening() throws {
        try prepareToServe()
        startBackgroundServices()
    }

    /// What must be ready before the first request: the schema (unless `migrate_on_start` is off)
    /// and the change sequences (until they are read, finds simply get no 304).
    private func prepareToServe() throws {
        if configuration.migrateOnStart {
            let applied = try migrate()
            if !applied.isEmpty { logger.notice("applied migrations", metadata: ["names": "\(applied)"]) }
        }
        // A view may not hide a custom class of the same name (docs/decisions/038).
        try checkViews()
        // Before the first request: until it has read the sequences, finds simply get no 304.
        classChanges.start()
    }

    /// What runs beside the requests: LiveQuery's feed of change notifications and the workers.
    private func startBackgroundServices() {
        liveQuery.start()
        workers?.start()
    }

    /// How the HTTP server's loops and handler pool are moving (nil before `start`), for the watchdog.
    public var serverProgress: HTTPServerProgress? { server?.progress }

    /// Access log lines dropped so far because the output was behind (0 before `start`).
    public var accessLogDroppedLines: Int { server?.accessLogDroppedLines ?? 0 }

    /// The port the server listens on (after `start`).
    public var port: Int { server?.port ?? configuration.port }

    /// The base URL of absolute file URLs.
    public var publicURL: String {
        if let bound = boundPublicURL.withLock({ $0 }) { return bound }
        return configuration.publicURL.isEmpty ? "http://localhost:\(port)" : configuration.effectivePublicURL
    }

    /// What asset URLs start with: `public_asset_url/` (a CDN in front of the bucket) when set,
    /// else `publicURL/bucket/`.
    public var assetURLPrefix: String {
        var asset = configuration.publicAssetURL
        while asset.hasSuffix("/") { asset.removeLast() }
        return asset.isEmpty ? publicURL + "/" + configuration.bucket + "/" : asset + "/"
    }

    /// The encoder of Parse objects as this server answers them now: absolute file URLs under
    /// `assetURLPrefix`, signed unless `bucket_public`.
    public func makeEncoder() -> ParseObjectEncoder {
        ParseObjectEncoder(
            publicURL: publicURL, bucket: configuration.bucket, assetURL: configuration.publicAssetURL,
            signer: assetSigner)
    }

    /// What the asset URLs of an answer given now depend on besides the public URL: the signed
    /// URLs' expiry (it changes once per window), so an ETag covering file URLs changes with it.
    public var assetURLVersion: String {
        Self.assetURLVersion(window: assetURLWindow)
    }

    /// The signed asset URLs' expiry now (it changes once per window), nil when they are not signed.
    public var assetURLWindow: Int64? { assetSigner?.expiresNow() }

    /// `assetURLVersion` for a window `assetURLWindow` gave. Names the URL form too: a client
    /// holding answers with query-signed URLs (before the signature moved into the path) gets the
    /// path form instead of a 304.
    public static func assetURLVersion(window: Int64?) -> String {
        window.map { "signed-path:\($0)" } ?? "public"
    }

    /// Stops accepting, drains in-flight requests, lets the workers finish their current photo,
    /// then closes the database pool. Safe to call more than once; `wait()` returns after it.
    public func shutdown() {
        let first = shuttingDown.withLock { shuttingDown in
            defer { shuttingDown = true }
            return !shuttingDown
        }
        guard first else { return }
        server?.shutdown()
        liveQuery.stop()
        workers?.stop()
        server?.wait()
        classChanges.stop()
        idempotency.stop()
        pool.shutdown()
        stopped.signal()
    }

    /// Blocks until `shutdown()` has finished.
    public func wait() {
        stopped.wait()
        stopped.signal()
    }

}
