import BlobStore
import Foundation
import HTTPServer

extension GalleryApplication {
    /// Wires the routes: operations, the bucket, the Parse API, users, jobs, LiveQuery and the web
    /// gallery, each URL space's route group with the middleware it needs (docs/decisions/029).
    func registerRoutes() {
        let keys = KeyChecker(
            appID: configuration.appID, restKey: configuration.restKey, masterKey: configuration.masterKey)
        let api = ParseAPI(application: self)
        // The Parse mount and the bucket face browsers and client developers (CORS, simulation):
        // their routes go through BrowserAccess, and each route through the keys it needs. The
        // mount grants CORS on every answer (Parse Server), the bucket to requests with an `Origin`
        // (S3, MinIO), with `Vary: Origin` (docs/decisions/041, round 10).
        let simulation = RequestSimulation(
            latencyMs: configuration.simulateLatencyMs, errorRate: configuration.simulateErrorRate, keys: keys)
        let browser = BrowserAccess(cors: CORSPolicy(configured: configuration.corsOrigins), simulation: simulation)
        let browserFacing = router.group(browser)
        let bucketBrowser = BrowserAccess(
            cors: CORSPolicy(configured: configuration.corsOrigins, scope: .requestsWithOrigin), simulation: simulation)
        let bucketFacing = router.group(bucketBrowser)
        OperationsRoutes(
            configuration: configuration, pool: pool, migrator: migrator, metrics: metrics, keys: keys, logger: logger
        )
        .register(on: router, mount: browserFacing)
        let bucketRoutes = BucketRoutes(
            bucket: configuration.bucket, store: store, remote: blobs as? S3BlobStore,
            proxy: bucketProxy, redirect: configuration.assetDelivery == "redirect",
            presignedSeconds: configuration.presignedURLSeconds,
            access: configuration.bucketPublic ? .public : .signed(assetSigner), logger: logger)
        bucketRoutes.register(on: bucketFacing)
        SizeRoutes(bucket: bucketRoutes, sizes: sizes).register(on: bucketFacing)
        // Flickr's REST API and its Flickr-shaped photo URLs (docs/decisions/034-flickr-api.md).
        let flickrSecrets = configuration.urlSigningKey.flatMap {
            $0.count >= AssetURLSigner.minimumKeyLength ? FlickrSecrets(key: $0) : nil
        }
        FlickrAssetRoutes(bucket: bucketRoutes, sizes: sizes, secrets: flickrSecrets).register(on: router)
        FlickrRoutes(
            api: FlickrAPI(
                repository: FlickrRepository(pool: pool, publicRead: configuration.publicRead), sizes: sizes,
                urls: FlickrAssetURLs(secrets: flickrSecrets, publicURL: { [unowned self] in self.publicURL })),
            sessions: sessions, appID: configuration.appID,
            oauth: configuration.flickrAPISecret.map { FlickrOAuth(consumerSecret: $0) },
            answers: FlickrAnswerCache(
                bodies: manifestCache, classChanges: classChanges, publicURL: { [unowned self] in self.publicURL }),
            logger: logger
        ).register(on: router)
        ParseRoutes(
            context: ParseRoutes.Context(
                configuration: configuration, logger: logger, api: api, sessions: sessions,
                classChanges: classChanges, manifestCache: manifestCache, uploadAdmission: uploadAdmission,
                uploads: uploads,
                jsonUploadSlots: jsonUploadSlots,
                store: store, idempotency: idempotency,
                currentPublicURL: { [unowned self] in self.publicURL },
                currentAssetURLWindow: { [unowned self] in self.assetURLWindow },
                makeEncoder: { [unowned self] in self.makeEncoder() }),
            keys: keys
        ).register(on: browserFacing)
        SchemaRoutes(
            api: api, keys: keys, mountPath: configuration.mountPath, maxJSONDepth: configuration.maxJSONDepth,
            permissionsChanged: { [manifestCache] in manifestCache.removeAll() }
        ).register(on: browserFacing)
        // After ParseRoutes: /classes/_User's literal segment wins over /classes/:className.
        UserRoutes(
            accounts: accounts, authenticator: sessions, keys: keys, api: api, publicRead: configuration.publicRead,
            mountPath: configuration.mountPath, maxJSONDepth: configuration.maxJSONDepth,
            publicURL: { [unowned self] in self.publicURL }
        ).register(on: browserFacing)
        // After ParseRoutes too: /classes/_Role, as /classes/_User.
        RoleRoutes(
            repository: RoleRepository(pool: pool), sessions: sessions, keys: keys,
            publicRead: configuration.publicRead,
            mountPath: configuration.mountPath, maxJSONDepth: configuration.maxJSONDepth,
            publicURL: { [unowned self] in self.publicURL },
            rolesChanged: { [classChanges] in classChanges.refreshAfterWrite() }, idempotency: idempotency
        ).register(on: browserFacing)
        ParseConfigRoutes(
            repository: ParseConfigRepository(pool: pool), keys: keys, mountPath: configuration.mountPath,
            maxJSONDepth: configuration.maxJSONDepth
        ).register(on: browserFacing)
        ParseCloudRoutes(keys: keys, mountPath: configuration.mountPath, maxJSONDepth: configuration.maxJSONDepth)
            .register(on: browserFacing)
        ParseAggregateRoutes(pool: pool, api: api, keys: keys, mountPath: configuration.mountPath, limits: api.limits)
            .register(on: browserFacing)
        ParseJobRoutes(
            jobs: jobs, mountPath: configuration.mountPath, maxJSONDepth: configuration.maxJSONDepth, keys: keys
        ).register(on: browserFacing)
        // Once their error responders are mounted: CORS on errors, and the preflight answers.
        browser.install(on: router, prefixes: [configuration.mountPath])
        bucketBrowser.install(on: router, prefixes: ["/" + configuration.bucket])
        let configuration = self.configuration
        var liveLimits = LiveQueryLimits()
        liveLimits.connectTimeout = Double(configuration.liveQueryConnectTimeoutMs) / 1000
        liveLimits.maxSubscriptions = configuration.liveQueryMaxSubscriptions
        liveLimits.maxSocketsPerAddress = configuration.liveQueryMaxSocketsPerAddress
        liveLimits.query.maxJSONDepth = configuration.maxJSONDepth
        liveQuery = LiveQueryServer(
            path: configuration.liveQueryPath.isEmpty ? configuration.mountPath : configuration.liveQueryPath,
            keys: keys,
            sessions: sessions, publicRead: configuration.publicRead, limits: liveLimits,
            permissions: api.schemas.builtIns, databaseURL: configuration.databaseURL,
            logger: logger,
            encoder: { [unowned self] in self.makeEncoder() },
            customClasses: { [catalog = api.schemas.catalog] in try? catalog.lookup($0) },
            views: { [views = api.views] in try? views.view(named: $0) },
            appFields: { [appFields = api.schemas.appFields] in (try? appFields.schema(of: $0)) ?? $0 })
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
        customObjects = CustomObjectService(
            schemas: schemas, limits: limits,
            allowClientClassCreation: application.configuration.allowClientClassCreation)
        classChanges = application.classChanges
        views = ViewCatalog(application.configuration.views, pool: application.pool)
    }
}
