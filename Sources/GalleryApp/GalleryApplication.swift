import BlobStore
import Foundation
import HTTPServer
import Imaging
import Logging
import Postgres

/// The whole server, assembled from a configuration: database pool, blob store, routes,
/// HTTP server and in-process workers. `galleryd serve` and the tests build it with the same
/// `init`, so what the tests exercise is what runs in production.
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
    public private(set) var liveQuery: LiveQueryServer!
    /// Display sizes (Flickr's ladder): URLs, and renditions made on first request.
    public private(set) var sizes: SizeService!
    /// In-process workers (nil when `workers` is 0).
    public private(set) var workers: WorkerPool?
    private var server: HTTPServer?
    private let shutdownLock = NSLock()
    /// `publicURL` once the server has bound its port (it cannot change after that).
    private var boundPublicURL: String?
    private let publicURLLock = NSLock()
    private var shuttingDown = false
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
        if !configuration.bucketPublic, let key = configuration.urlSigningKey, key.count >= AssetURLSigner.minimumKeyLength {
            assetSigner = AssetURLSigner(
                key: key, bucket: configuration.bucket, windowSeconds: configuration.urlWindowSeconds,
                validitySeconds: configuration.urlValiditySeconds)
        } else {
            assetSigner = nil
        }
        pool = PostgresPool(configuration: PostgresPoolConfiguration(
            url: configuration.databaseURL, size: configuration.poolSize,
            acquireTimeout: Double(configuration.poolTimeoutMs) / 1000,
            statementTimeout: Double(configuration.statementTimeoutMs) / 1000))
        migrator = Migrator(
            pool: pool, directory: URL(fileURLWithPath: Self.migrationsDirectory(configured: configuration.migrationsDir)))
        metrics = GalleryMetrics()
        if let remote = blobs as? S3BlobStore, configuration.assetDelivery == "proxy" {
            bucketProxy = BucketProxy(
                remote: remote, maxStreams: configuration.assetProxyStreams, bufferBytes: configuration.assetProxyBufferBytes,
                logger: logger)
        } else {
            bucketProxy = nil
        }
        let limits = ImageLimits(maxPixels: configuration.maxPixels)
        uploads = UploadService(pool: pool, store: blobs, limits: limits, logger: logger)
        var jobs = JobQueue(
            pool: pool, leaseSeconds: configuration.jobLeaseSeconds, retryBaseMs: configuration.jobRetryBaseMs,
            maxAttempts: configuration.jobMaxAttempts)
        jobs.transientRetrySeconds = Double(configuration.jobTransientRetryHours) * 3600
        jobs.transientMaxDelay = Double(configuration.jobTransientMaxDelaySeconds)
        self.jobs = jobs
        var uploadLimits = UploadAdmission.Limits(
            maxSpoolBytes: configuration.maxSpoolBytes, minFreeBytes: Int64(configuration.minFreeBytes),
            maxUploadBytes: configuration.maxUploadBytes)
        uploadLimits.maxPerUser = configuration.maxUploadsPerUser
        uploadLimits.maxPerAddress = configuration.maxUploadsPerAddress
        uploadAdmission = UploadAdmission(store: store, limits: uploadLimits)
        expensiveQueries = ExpensiveQueryGate(
            slots: configuration.expensiveQueryLimit, waitTimeout: Double(configuration.poolTimeoutMs) / 1000,
            statementTimeoutMs: configuration.expensiveStatementTimeoutMs)
        trash = TrashService(pool: pool, store: blobs, logger: logger)
        classChanges = ClassChangeSequences(pool: pool, databaseURL: configuration.databaseURL, logger: logger)
        manifestCache = ManifestCache(maxBytes: configuration.manifestCacheBytes)
        idempotency = ParseRequestIdempotency(pool: pool)
        sessions = SessionAuthenticator(sessions: SessionRepository(pool: pool))
        accounts = AccountService(
            pool: pool, authenticator: sessions, configuration: configuration, metrics: metrics, logger: logger,
            hasher: PasswordHasher(cost: configuration.passwordHashCost))
        router = HTTPRouter()
        sizes = SizeService(
            repository: SizeRepository(pool: pool), store: blobs, spool: store,
            spec: DerivativeSpec(
                quality: configuration.jpegQuality, quantizer: JPEGQuantizer(rawValue: configuration.jpegQuantizer) ?? .libjpeg),
            limits: limits,
            cacheBytes: Int64(configuration.sizeCacheBytes), registry: metrics.registry, logger: logger,
            makeEncoder: { [unowned self] in self.makeEncoder() })
        if configuration.workers > 0 {
            workers = makeWorkerPool(threads: configuration.workers)
        }
        registerRoutes()
        registerCollectors()
    }

    /// A worker pool over this application's queue, for `serve` (in-process) and `galleryd worker`.
    public func makeWorkerPool(threads: Int) -> WorkerPool {
        let processor = PhotoProcessor(
            pool: pool, store: blobs, spool: store,
            spec: DerivativeSpec(
                thumbnailShortEdge: configuration.thumbnailSize, previewLongEdge: configuration.previewSize,
                quality: configuration.jpegQuality,
                quantizer: JPEGQuantizer(rawValue: configuration.jpegQuantizer) ?? .libjpeg),
            limits: ImageLimits(maxPixels: configuration.maxPixels), maxOriginalBytes: Int64(configuration.maxUploadBytes))
        var settings = WorkerPool.Settings(threads: threads, trashRetentionDays: configuration.trashRetentionDays)
        settings.pollInterval = 2
        settings.orphanGraceHours = configuration.orphanGraceHours
        settings.tmpSweepAge = Double(configuration.tmpSweepMinutes) * 60
        settings.tmpSweepInterval = min(600, settings.tmpSweepAge / 2)
        return WorkerPool(
            settings: settings, queue: jobs, processor: processor, trash: trash, databaseURL: configuration.databaseURL,
            logger: logger, metrics: metrics)
    }

    private func registerRoutes() {
        let keys = KeyChecker(appID: configuration.appID, restKey: configuration.restKey, masterKey: configuration.masterKey)
        let api = ParseAPI(application: self)
        OperationsRoutes(configuration: configuration, pool: pool, migrator: migrator, metrics: metrics, keys: keys, logger: logger)
            .register(on: router)
        let bucketRoutes = BucketRoutes(
            bucket: configuration.bucket, store: store, remote: blobs as? S3BlobStore,
            proxy: bucketProxy, redirect: configuration.assetDelivery == "redirect",
            presignedSeconds: configuration.presignedURLSeconds,
            access: configuration.bucketPublic ? .public : .signed(assetSigner), logger: logger)
        bucketRoutes.register(on: router)
        SizeRoutes(bucket: bucketRoutes, sizes: sizes).register(on: router)
        // Flickr's REST API and its Flickr-shaped photo URLs (docs/decisions/034-flickr-api.md).
        let flickrSecrets = configuration.urlSigningKey.flatMap { $0.count >= AssetURLSigner.minimumKeyLength ? FlickrSecrets(key: $0) : nil }
        FlickrAssetRoutes(bucket: bucketRoutes, sizes: sizes, secrets: flickrSecrets).register(on: router)
        FlickrRoutes(
            api: FlickrAPI(
                repository: FlickrRepository(pool: pool, publicRead: configuration.publicRead), sizes: sizes,
                urls: FlickrAssetURLs(secrets: flickrSecrets, publicURL: { [unowned self] in self.publicURL })),
            sessions: sessions, appID: configuration.appID, logger: logger
        ).register(on: router)
        ParseRoutes(
            context: ParseRoutes.Context(
                configuration: configuration, logger: logger, api: api, sessions: sessions,
                classChanges: classChanges, manifestCache: manifestCache, uploadAdmission: uploadAdmission, uploads: uploads, store: store,
                idempotency: idempotency,
                currentPublicURL: { [unowned self] in self.publicURL },
                currentAssetURLWindow: { [unowned self] in self.assetURLWindow },
                makeEncoder: { [unowned self] in self.makeEncoder() }),
            keys: keys
        ).register(on: router)
        // After ParseRoutes: /classes/_User's literal segment wins over /classes/:className.
        UserRoutes(
            accounts: accounts, authenticator: sessions, keys: keys, api: api, publicRead: configuration.publicRead,
            mountPath: configuration.mountPath, maxJSONDepth: configuration.maxJSONDepth,
            publicURL: { [unowned self] in self.publicURL },
            usersChanged: { [classChanges, logger] in ParseRoutes.writeDone(classChanges, logger: logger) }
        ).register(on: router)
        ParseJobRoutes(
            jobs: jobs, classChanges: classChanges, logger: logger, mountPath: configuration.mountPath,
            maxJSONDepth: configuration.maxJSONDepth, keys: keys
        ).register(on: router)
        // Last: it decorates the routes registered above (CORS, the client developers' aids).
        BrowserAccess(
            cors: CORSPolicy(configured: configuration.corsOrigins),
            simulation: RequestSimulation(
                latencyMs: configuration.simulateLatencyMs, errorRate: configuration.simulateErrorRate, keys: keys)
        ).install(on: router, prefixes: [configuration.mountPath, "/" + configuration.bucket])
        let configuration = self.configuration
        var liveLimits = LiveQueryLimits()
        liveLimits.connectTimeout = Double(configuration.liveQueryConnectTimeoutMs) / 1000
        liveLimits.maxSubscriptions = configuration.liveQueryMaxSubscriptions
        liveLimits.maxSocketsPerAddress = configuration.liveQueryMaxSocketsPerAddress
        liveLimits.query.maxJSONDepth = configuration.maxJSONDepth
        liveQuery = LiveQueryServer(
            path: configuration.liveQueryPath.isEmpty ? configuration.mountPath : configuration.liveQueryPath, keys: keys,
            sessions: sessions, publicRead: configuration.publicRead, limits: liveLimits,
            databaseURL: configuration.databaseURL,
            logger: logger,
            encoder: { [unowned self] in self.makeEncoder() })
        router.add(liveQuery.route())
        WebRoutes(
            root: WebRoutes.directory(configured: configuration.webRoot), mountPath: configuration.mountPath,
            livePath: liveQuery.path,
            appID: configuration.appID, restKeyRequired: configuration.restKey != nil,
            signupOpen: configuration.signupOpen,
            pagePolicy: { [unowned self] in
                SecurityHeaders.pagePolicy(publicURL: self.publicURL, assetURLPrefix: self.assetURLPrefix)
            }
        ).register(on: router)
    }

    private func registerCollectors() {
        let pool = self.pool, store = self.blobs, jobs = self.jobs
        metrics.registry.addCollector { [weak self] in
            let stats = pool.stats
            var out: [(name: String, help: String, type: String, samples: [(labels: String, value: Double)])] = [
                ("galleryd_db_pool_size", "Database connections in the pool.", "gauge", [("", Double(stats.size))]),
                ("galleryd_db_pool_in_use", "Database connections in use.", "gauge", [("", Double(stats.inUse))]),
                ("galleryd_db_pool_waiting", "Callers waiting for a database connection.", "gauge", [("", Double(stats.waiting))]),
                ("galleryd_blob_bytes_written_total", "Bytes written to the blob store by this process.", "counter",
                 [("", Double(store.bytesWritten))]),
                ("galleryd_access_log_dropped_total", "Access log lines dropped because the output was behind.", "counter",
                 [("", Double(self?.accessLogDroppedLines ?? 0))]),
            ]
            if let proxy = self?.bucketProxy {
                out.append(("galleryd_asset_proxy_streams", "Downloads streaming from S3 through the bucket endpoint now.", "gauge",
                            [("", Double(proxy.activeStreams))]))
                out.append(("galleryd_asset_proxy_bytes_total", "Bytes read from S3 for proxied downloads.", "counter",
                            [("", Double(proxy.bytesFromStore))]))
            }
            if let counts = try? jobs.counts() {
                out.append(("galleryd_jobs", "Processing jobs by state.", "gauge",
                            counts.sorted { $0.key < $1.key }.map { (labels: "state=\"\($0.key)\"", value: Double($0.value)) }))
            }
            return out
        }
    }

    /// The blob store `storage` names: the local directory store, or an `S3BlobStore` with the
    /// secret from `s3_secret_access_key` or the file `s3_secret_access_key_file`.
    public static func makeBlobStore(configuration: GalleryConfiguration, local: LocalBlobStore) throws -> any BlobStore {
        guard configuration.storage == "s3" else { return local }
        return S3BlobStore(configuration: try s3Configuration(configuration))
    }

    /// The S3 settings of `configuration` (`storage` aside), with the secret read from
    /// `s3_secret_access_key` or the file `s3_secret_access_key_file`; throws naming the key that is
    /// missing or does not fit.
    public static func s3Configuration(_ configuration: GalleryConfiguration) throws -> S3Configuration {
        var secret = configuration.s3SecretAccessKey ?? ""
        if secret.isEmpty, !configuration.s3SecretAccessKeyFile.isEmpty {
            guard let text = try? String(contentsOfFile: configuration.s3SecretAccessKeyFile, encoding: .utf8) else {
                throw ConfigurationError.invalidValue(
                    key: "s3_secret_access_key_file", value: configuration.s3SecretAccessKeyFile, reason: "cannot be read")
            }
            secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let endpoint = URL(string: configuration.s3Endpoint), endpoint.host != nil else {
            throw ConfigurationError.invalidValue(key: "s3_endpoint", value: configuration.s3Endpoint, reason: "storage = \"s3\" needs an endpoint URL")
        }
        guard !configuration.s3Bucket.isEmpty else {
            throw ConfigurationError.invalidValue(key: "s3_bucket", value: "", reason: "storage = \"s3\" needs a bucket")
        }
        try configuration.validateMultipartParts()
        return S3Configuration(
            endpoint: endpoint, region: configuration.s3Region, bucket: configuration.s3Bucket,
            accessKeyId: configuration.s3AccessKeyId, secretAccessKey: secret, pathStyle: configuration.s3PathStyle,
            prefix: configuration.s3Prefix, multipartThreshold: Int64(configuration.s3MultipartBytes),
            multipartPartSize: Int64(configuration.s3MultipartPartBytes))
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
                metadata: ["admin": "\(assigned.adminId ?? "")", "photos": "\(assigned.photos)", "galleries": "\(assigned.galleries)",
                           "galleryItems": "\(assigned.galleryItems)"])
        }
        return applied
    }

    /// Migrates (unless configured not to), starts listening and starts the workers.
    public func start(listenFileDescriptor: Int32? = nil) throws {
        if configuration.migrateOnStart {
            let applied = try migrate()
            if !applied.isEmpty { logger.notice("applied migrations", metadata: ["names": "\(applied)"]) }
        }
        var http = HTTPServerConfiguration()
        http.host = configuration.host
        http.port = configuration.port
        http.maxConnections = configuration.maxConnections
        http.handlerThreads = configuration.effectiveHandlerThreads
        http.eventLoopThreads = configuration.eventLoops
        http.ioBackend = HTTPIOBackend(rawValue: configuration.ioBackend) ?? .platformDefault
        http.listenFileDescriptor = listenFileDescriptor
        http.temporaryDirectory = store.spoolDirectory
        http.limits.requestLineBytes = configuration.maxRequestLineBytes
        http.limits.headerBytes = configuration.maxHeaderBytes
        http.limits.headerCount = configuration.maxHeaderCount
        http.limits.maxBodyBytes = configuration.maxBodyBytes
        http.timeouts.headerRead = Double(configuration.headerTimeoutMs) / 1000
        http.timeouts.idleKeepAlive = Double(configuration.idleTimeoutMs) / 1000
        http.timeouts.bodyRead = Double(configuration.bodyTimeoutMs) / 1000
        http.timeouts.minimumBodyRate = Double(configuration.minBodyRate)
        http.timeouts.minimumResponseRate = Double(configuration.minResponseRate)
        http.timeouts.minimumRateGrace = Double(configuration.rateGraceMs) / 1000
        http.drainTimeout = Double(configuration.drainTimeoutMs) / 1000
        http.defaultHeaders = SecurityHeaders.defaults
        // Before the first request: until it has read the sequences, finds simply get no 304.
        classChanges.start()
        http.accessLog.format = HTTPAccessLogFormat(rawValue: configuration.accessLog) ?? .text
        http.accessLog.bufferBytes = configuration.accessLogBuffer
        let server = HTTPServer(configuration: http, router: router, logger: logger, observer: metrics)
        try server.start()
        self.server = server
        // Fixed from now on (the port is bound): made once, not per find's ETag.
        let bound = configuration.publicURL.isEmpty ? "http://localhost:\(server.port)" : configuration.effectivePublicURL
        publicURLLock.withLock { boundPublicURL = bound }
        liveQuery.start()
        workers?.start()
        logger.notice("galleryd listening", metadata: [
            "host": "\(configuration.host)", "port": "\(server.port)", "publicURL": "\(publicURL)",
        ])
    }

    /// How the HTTP server's loops and handler pool are moving (nil before `start`), for the watchdog.
    public var serverProgress: HTTPServerProgress? { server?.progress }

    /// Access log lines dropped so far because the output was behind (0 before `start`).
    public var accessLogDroppedLines: Int { server?.accessLogDroppedLines ?? 0 }

    /// The port the server listens on (after `start`).
    public var port: Int { server?.port ?? configuration.port }

    /// The base URL of absolute file URLs.
    public var publicURL: String {
        if let bound = publicURLLock.withLock({ boundPublicURL }) { return bound }
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
            publicURL: publicURL, bucket: configuration.bucket, assetURL: configuration.publicAssetURL, signer: assetSigner)
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
        let first = shutdownLock.withLock { () -> Bool in
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

    /// The migrations directory: the configured one, or the first that exists of `migrations/`
    /// beside the source tree the binary was built in, `/usr/local/share/galleryd/migrations`, `./migrations`.
    static func migrationsDirectory(configured: String) -> String {
        if !configured.isEmpty { return configured }
        if let env = ProcessInfo.processInfo.environment["GALLERYD_MIGRATIONS_DIR"], !env.isEmpty { return env }
        var candidates: [String] = []
        // .build/<config>/galleryd → the repository's migrations/.
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("migrations").path)
            directory = directory.deletingLastPathComponent()
        }
        // The source tree this file was compiled from (tests, development builds).
        candidates.append(
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("migrations").path)
        candidates += ["/usr/local/share/galleryd/migrations", FileManager.default.currentDirectoryPath + "/migrations"]
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/0001_initial.sql") } ?? "migrations"
    }
}

extension ParseAPI {
    /// The operations wired from the application's pool, services and configuration.
    init(application: GalleryApplication) {
        var limits = ParseLimits()
        limits.maxLimit = application.configuration.maxQueryLimit
        limits.maxSkip = application.configuration.maxQuerySkip
        limits.maxJSONDepth = application.configuration.maxJSONDepth
        limits.maxBodyBytes = application.configuration.maxBodyBytes
        self.init(
            pool: application.pool, expensiveQueries: application.expensiveQueries, uploads: application.uploads,
            trash: application.trash, publicURL: { application.publicURL },
            bucket: application.configuration.bucket, publicAssetURL: application.configuration.publicAssetURL,
            mountPath: application.configuration.mountPath, limits: limits)
        assetSigner = application.assetSigner
    }
}
