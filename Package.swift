// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ObjectStore",
    products: [
        .library(name: "ObjectStoreModel", targets: ["ObjectStoreModel"]),
        .library(name: "ObjectStore", targets: ["ObjectStore"]),
        .library(name: "ObjectStoreSync", targets: ["ObjectStoreSync", "ObjectStoreSyncNetworking"]),
        .executable(name: "taskctl", targets: ["taskctl"]),
        .executable(name: "taskctl-http", targets: ["taskctl-http"]),
        .executable(name: "objectstore-model", targets: ["objectstore-model"]),
        .plugin(name: "ObjectStoreModelPlugin", targets: ["ObjectStoreModelPlugin"]),
    ],
    targets: [
        .target(name: "ObjectStoreModel"),
        // The storage engine: the store protocol, the binary, JSON and in-memory stores.
        .target(name: "ObjectStoreStorage", dependencies: ["ObjectStoreModel"]),
        .target(name: "ObjectStore", dependencies: ["ObjectStoreStorage", "ObjectStoreModel"]),
        // Sync with TaskChampion's servers: crypto, compression, the protocol, transports and
        // the engine that turns a store's history into operations and applies the server's.
        .target(name: "ObjectStoreSync", dependencies: ["ObjectStore", "ObjectStoreModel"]),
        // HTTP through URLSession (FoundationNetworking, libcurl), kept out of ObjectStoreSync
        // so taskctl does not load it at every start; taskctl-http is taskctl's helper for it.
        .target(name: "ObjectStoreSyncNetworking", dependencies: ["ObjectStoreSync"]),
        .executableTarget(name: "taskctl-http", dependencies: ["ObjectStoreSync", "ObjectStoreSyncNetworking"]),
        // Checks Models/NAME at build time and embeds the files (ObjectStoreModelPlugin).
        .executableTarget(name: "objectstore-model", dependencies: ["ObjectStoreModel"]),
        .plugin(name: "ObjectStoreModelPlugin", capability: .buildTool(), dependencies: ["objectstore-model"],
                path: "Sources/ObjectStoreModelPlugin"),
        // Without taskctl-http among its dependencies: that would link the helper's networking
        // into taskctl. `swift build` builds both.
        .executableTarget(name: "taskctl", dependencies: ["ObjectStore", "ObjectStoreModel", "ObjectStoreSync"], plugins: ["ObjectStoreModelPlugin"]),
        .testTarget(name: "ObjectStoreModelTests", dependencies: ["ObjectStoreModel"]),
        .testTarget(name: "ObjectStoreStorageTests", dependencies: ["ObjectStoreStorage", "ObjectStoreModel", "ObjectStore"]),
        .testTarget(name: "ObjectStoreTests", dependencies: ["ObjectStore", "ObjectStoreStorage", "ObjectStoreModel"], exclude: ["Fixtures"]),
        .testTarget(name: "ObjectStoreSyncTests", dependencies: ["ObjectStoreSync", "ObjectStoreSyncNetworking", "ObjectStore", "ObjectStoreStorage", "ObjectStoreModel"]),
        .testTarget(name: "taskctlTests", dependencies: ["taskctl", "ObjectStore", "ObjectStoreStorage", "ObjectStoreModel", "ObjectStoreSync", "ObjectStoreSyncNetworking"], exclude: ["Fixtures"]),
        // The docs' Swift snippets, compiled (snippets are fragments: unused values are fine there)
        // as a user's module would be: without access to the package's `package` API.
        .testTarget(name: "DocSnippetTests", dependencies: ["ObjectStore", "ObjectStoreModel", "ObjectStoreSync", "ObjectStoreSyncNetworking"],
                    packageAccess: false, swiftSettings: [.unsafeFlags(["-suppress-warnings"])]),
    ],
    swiftLanguageModes: [.v6]
)
