#if DEBUG
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The stepped kill harness's side in the process under test (debug builds only): every
/// file-changing step of a store passes through ``FileIO/step(_:_:)``, which counts it here.
/// `OBJECTSTORE_STEP_LOG=FILE` lists the steps (number, name, file) so a test knows how many
/// a command takes; `OBJECTSTORE_KILL_AT_STEP=N` sends the process SIGKILL instead of step N,
/// leaving the files exactly as steps 1 to N-1 left them.
enum KillPoints {
    private struct Settings {
        var killAt: Int?
        var log: Int32?
        var count = 0
    }

    private static let settings: Locked<Settings> = {
        var settings = Settings()
        if let text = getenv("OBJECTSTORE_KILL_AT_STEP").map({ String(cString: $0) }), let step = Int(text), step > 0 {
            settings.killAt = step
        }
        if let path = getenv("OBJECTSTORE_STEP_LOG").map({ String(cString: $0) }), !path.isEmpty {
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            if fd >= 0 { settings.log = fd }
        }
        return Locked(settings)
    }()

    /// The log size past which a store compacts or cuts its log, when the harness sets one
    /// (`OBJECTSTORE_COMPACTION_THRESHOLD`): so that a command of a test reaches a log cut
    /// after a few saves, not after 256 KiB of them.
    static let compactionThreshold: Int? = getenv("OBJECTSTORE_COMPACTION_THRESHOLD").flatMap { Int(String(cString: $0)) }.flatMap { $0 > 0 ? $0 : nil }

    static func step(_ name: StaticString, _ path: String) {
        settings.withLock { settings in
            guard settings.killAt != nil || settings.log != nil else { return }
            settings.count += 1
            if let fd = settings.log {
                let line = Array("\(settings.count) \(name) \(path)\n".utf8)
                _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            }
            if settings.killAt == settings.count {
                kill(getpid(), SIGKILL)
            }
        }
    }
}
#endif
