// swift-tools-version:6.0
import PackageDescription

/// galleryd: a self-hosted photo gallery backend.
/// Layers depend one way (see DESIGN.md): galleryd → GalleryApp → HTTPServer, Postgres,
/// Imaging, BlobStore → the C library targets.
let package = Package(
    name: "galleryd",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "galleryd", targets: ["galleryd"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // C libraries, found with pkg-config.
        .systemLibrary(
            name: "CLibpq", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        .systemLibrary(
            name: "CTurboJPEG", pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(
            name: "CJPEG", pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        // setjmp/longjmp error handling for the libjpeg API, which Swift cannot express.
        .target(name: "CJPEGShim", dependencies: ["CJPEG"]),
        // epoll, eventfd and accept4 for the HTTP event loops (not exported by Swift's Glibc module); Linux only.
        .target(name: "CLinuxShim"),

        .target(
            name: "HTTPServer",
            dependencies: [
                "CZlib", .target(name: "CLinuxShim", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "Postgres",
            dependencies: ["CLibpq", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "Imaging",
            dependencies: ["CJPEG", "CJPEGShim", "CTurboJPEG"]),
        .target(name: "BlobStore"),
        .target(
            name: "GalleryApp",
            dependencies: [
                "HTTPServer", "Postgres", "Imaging", "BlobStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .executableTarget(
            name: "galleryd",
            dependencies: [
                "GalleryApp", "Imaging",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        .executableTarget(
            name: "galleryd-bench",
            dependencies: ["HTTPServer", "Postgres"],
            path: "bench/Sources"),

        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        // The executable's systemd pieces (notify socket, watchdog health), tested in-process.
        .testTarget(name: "gallerydTests", dependencies: ["galleryd", "HTTPServer", "Postgres"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres"]),
        .testTarget(name: "ImagingTests", dependencies: ["Imaging"], resources: [.copy("Fixtures")]),
        .testTarget(name: "BlobStoreTests", dependencies: ["BlobStore"]),
        .testTarget(
            name: "GalleryAppTests",
            dependencies: ["GalleryApp", "HTTPServer", "Postgres", "Imaging", "BlobStore"]),
    ],
    swiftLanguageModes: [.v5]
)
