// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ObjectStore",
    products: [
        .library(name: "ObjectStoreModel", targets: ["ObjectStoreModel"]),
        .library(name: "ObjectStore", targets: ["ObjectStore"]),
        .executable(name: "taskctl", targets: ["taskctl"]),
    ],
    targets: [
        .target(name: "ObjectStoreModel"),
        .target(name: "ObjectStore", dependencies: ["ObjectStoreModel"]),
        .executableTarget(name: "taskctl", dependencies: ["ObjectStore", "ObjectStoreModel"]),
        .testTarget(name: "ObjectStoreModelTests", dependencies: ["ObjectStoreModel"]),
        .testTarget(name: "ObjectStoreTests", dependencies: ["ObjectStore", "ObjectStoreModel"], exclude: ["Fixtures"]),
        .testTarget(name: "taskctlTests", dependencies: ["taskctl", "ObjectStore", "ObjectStoreModel"], exclude: ["Fixtures"]),
        // The docs' Swift snippets, compiled (snippets are fragments: unused values are fine there).
        .testTarget(name: "DocSnippetTests", dependencies: ["ObjectStore", "ObjectStoreModel"], swiftSettings: [.unsafeFlags(["-suppress-warnings"])]),
    ],
    swiftLanguageModes: [.v6]
)
