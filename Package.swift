// swift-tools-version:6.0
import PackageDescription

/// galleryd: a self-hosted photo gallery backend.
/// Layers depend one way (see docs/architecture.md): galleryd → GalleryApp → HTTPServer, Postgres,
/// Imaging, BlobStore → the C library targets.
let package = Package(
    name: "galleryd",
    // Linux is built and tested; the macOS branches (Dispatch reactor, SystemCalls+Darwin) are written
    // but unbuilt: there is no Mac on the build machine (README, "macOS"). macOS 15 for the
    // standard library's Synchronization (Mutex, Atomic), the package's only locks.
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "galleryd", targets: ["galleryd"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // C libraries, found with pkg-config.
        .systemLibrary(
            name: "CLibpq", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        .systemLibrary(
            name: "CJPEG", pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        // HEIF and AVIF (libheif 1.15 decodes HEVC through libde265 and AV1 through dav1d/aom).
        .systemLibrary(
            name: "CHeif", pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"])]),
        // PNG through libpng: row by row behind CPNGShim's setjmp guard, interlaced files through
        // the simplified API (png_image_*), which keeps its setjmp/longjmp inside libpng.
        .systemLibrary(
            name: "CPNG", pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]),
        // WebP stills (libwebp) and animations' first frame (libwebpdemux).
        .systemLibrary(
            name: "CWebP", pkgConfig: "libwebpdemux",
            providers: [.apt(["libwebp-dev"])]),
        // setjmp/longjmp error handling for the libjpeg API, which Swift cannot express.
        .target(name: "CJPEGShim", dependencies: ["CJPEG"]),
        // The resampler's inner loops in C: vectorised for any target, AVX2+FMA where the CPU has them.
        .target(name: "CResampleKernels", cSettings: [.unsafeFlags(["-O3"], .when(configuration: .release))]),
        // setjmp/longjmp error handling for libpng's row-by-row reader (PNGRowDecoder).
        .target(name: "CPNGShim", dependencies: ["CPNG"]),
        // epoll, eventfd and accept4 for the HTTP event loops (not exported by Swift's Glibc module); Linux only.
        .target(name: "CLinuxShim"),

        // Proleptic Gregorian day arithmetic: the one calendar of Postgres, Parse and EXIF dates.
        .target(name: "CivilCalendar"),

        .target(
            name: "HTTPServer",
            dependencies: [
                "CZlib", .target(name: "CLinuxShim", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log"),
                // Insecure.SHA1 for the WebSocket handshake's Sec-WebSocket-Accept.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // Every request touches the connection's stored properties dozens of times; in release
            // builds their dynamic exclusivity checks (swift_beginAccess) are left out. Debug builds,
            // and so the tests, keep them. Measured in docs/decisions/005-cpu-per-request.md.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .target(
            name: "Postgres",
            dependencies: ["CLibpq", "CivilCalendar", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "Imaging",
            dependencies: [
                "CJPEG", "CJPEGShim", "CHeif", "CPNG", "CPNGShim", "CResampleKernels", "CWebP", "CZlib",
                "CivilCalendar", .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "BlobStore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        .target(
            name: "GalleryApp",
            dependencies: [
                "HTTPServer", "Postgres", "Imaging", "BlobStore", "CivilCalendar",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                // KDF.Scrypt for password hashes (Users/PasswordHasher).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),
        .executableTarget(
            name: "galleryd",
            dependencies: [
                "GalleryApp", "Imaging",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]),

        .executableTarget(
            name: "galleryd-bench",
            dependencies: [
                "HTTPServer", "Postgres", "GalleryApp", "BlobStore",
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "bench/Sources"),

        // What several test targets share: the raw-socket HTTP client, the PostgreSQL cluster lock,
        // the DATABASE_URL lookup (like Hummingbird's HummingbirdTesting). Not a product.
        .target(name: "GalleryTestSupport", dependencies: ["Postgres"], path: "Tests/GalleryTestSupport"),

        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "GalleryTestSupport"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "GalleryTestSupport"]),
        // The executable's commands run as an operator runs them (the built binary), and its systemd
        // pieces (notify socket, watchdog health) in process.
        .testTarget(name: "gallerydTests", dependencies: ["galleryd", "HTTPServer", "Postgres", "GalleryTestSupport"]),
        .testTarget(
            name: "ImagingTests",
            dependencies: ["Imaging", "CResampleKernels", "CZlib", "CPNG", "CHeif", "GalleryTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "BlobStoreTests", dependencies: ["BlobStore"]),
        .testTarget(name: "CivilCalendarTests", dependencies: ["CivilCalendar"]),
        .testTarget(
            name: "GalleryAppTests",
            dependencies: ["GalleryApp", "HTTPServer", "Postgres", "Imaging", "BlobStore", "GalleryTestSupport"]),
    ],
    // Every target in Swift 6 mode: strict concurrency checking (docs/decisions/030).
    swiftLanguageModes: [.v6]
)
