// swift-tools-version:6.1
// Bench-only anchor for bench/manifest-anchor.sh (issue #17): the Photo manifest route served by
// Hummingbird 2 + PostgresNIO with a hand-written JSON writer. A package of its own, never part of
// galleryd's build or `make test`; its build folder (.build here) is ignored by git.
import PackageDescription

let package = Package(
    name: "manifest-anchor",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        .executableTarget(
            name: "ManifestAnchor",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        )
    ]
)
