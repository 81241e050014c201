// swift-tools-version:6.0
// The benchmark harness: its own package, so the product package stays dependency-free.
import PackageDescription

let package = Package(
    name: "ObjectStoreBenchmarks",
    dependencies: [
        .package(name: "ObjectStore", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "objectstore-bench",
            dependencies: [
                .product(name: "ObjectStore", package: "ObjectStore"),
                .product(name: "ObjectStoreModel", package: "ObjectStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
