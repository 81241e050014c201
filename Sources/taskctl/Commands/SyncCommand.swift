import Foundation
import ObjectStore
import ObjectStoreModel
import ObjectStoreSync

/// `taskctl sync` and `taskctl sync --status`: the store's tasks synced with a TaskChampion
/// sync server, as Taskwarrior 3 syncs (docs/sync.md).
enum SyncCommand {
    static func run(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "sync")
        try args.allowWords(0, command: "sync")
        let context = try app.context()
        let coordinator = context.coordinator
        let mapping = TaskwarriorMapping(now: app.now)
        if args.has("status") {
            // The store alone says where it stands: no server is opened or named.
            let unopened = SyncRemote.custom(identity: "") { throw SyncServerError.failed(url: "", reason: "sync --status opens no server") }
            try status(SyncEngine(coordinator: coordinator, remote: unopened, mapping: mapping), app: app)
            return
        }
        // The remote through the library's public API, as any program would: only the
        // transport (taskctl's helper process) and the key cache's place are taskctl's own.
        let remote: SyncRemote
        var transport: HelperTransport?
        if app.config.syncGitPath != nil {
            remote = try gitRemote(app)
        } else {
            guard let helper = HelperTransport.locate() else {
                throw CLIError.sync("taskctl sync needs taskctl-http, its network helper, beside taskctl (\(Bundle.main.executablePath ?? "?")); build it (swift build) or install taskctl again")
            }
            let started = HelperTransport(helper: helper, timeout: app.config.syncTimeout)
            transport = started
            remote = app.config.syncAWSBucket != nil ? try bucketRemote(app, transport: started) : try serverRemote(app, transport: started)
        }
        defer { transport?.finish() }
        let engine = try SyncEngine(coordinator: coordinator, remote: remote, mapping: mapping, clock: { app.now })
        // Progress on the terminal (standard error), one line redrawn, cleared at the end.
        let shows = isatty(STDERR_FILENO) == 1 && app.environment["TERM"] != "dumb"
        let width = app.terminal.width
        let report: SyncReport
        var sentAfter = 0, warningsAfter: [String] = []
        do {
            // Recurring tasks' instances that are due are made before the sync (sent with
            // it) and after it, for templates received; those are sent by a second exchange.
            // Named after their template and place, the instances two replicas make are one.
            try makeInstances(context, app: app)
            report = try engine.sync { progress in
                if shows { FileHandle.standardError.write(Data("\r\(progressLine(progress, width: width))\u{1B}[K".utf8)) }
            }
            context.reset()
            if try makeInstances(context, app: app) {
                let second = try engine.sync { _ in }
                sentAfter = second.operationsSent
                warningsAfter = second.warnings
            }
            if shows { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        } catch let error as SyncServerError {
            throw CLIError.sync("sync failed: \(error)\nnothing local was lost: changes not sent go with the next sync")
        } catch let error as SyncError {
            throw CLIError.sync("sync failed: \(error)")
        }
        for warning in report.warnings + warningsAfter { app.output.warn("taskctl: sync: \(warning)") }
        var parts: [String] = []
        parts.append(report.versionsReceived == 0 ? "nothing new from the server" : "received \(report.operationsApplied) change\(report.operationsApplied == 1 ? "" : "s") in \(report.versionsReceived) version\(report.versionsReceived == 1 ? "" : "s")")
        if report.startedFromSnapshot { parts.append("started from the server's snapshot") }
        let sent = report.operationsSent + sentAfter
        if sent > 0 {
            parts.append("sent \(sent) change\(sent == 1 ? "" : "s")" + (report.sentEverything ? " (every task: the first sync with this server)" : ""))
        } else {
            parts.append("nothing to send")
        }
        if report.snapshotSent { parts.append("sent a snapshot") }
        app.output.line("synced: " + parts.joined(separator: "; "))
    }

    /// Makes the recurring tasks' due instances (``RecurringTasks``) as a transaction of
    /// its own; whether anything changed (instances made, a mask or a template's status).
    @discardableResult
    static func makeInstances(_ context: ManagedObjectContext, app: App) throws -> Bool {
        var recorder = ChangeRecorder(command: "recurrence")
        try RecurringTasks.update(in: context, app: app, recorder: &recorder, everything: true)
        context.processPendingChanges()
        guard context.hasChanges else { return false }
        try recorder.save(context, app: app)
        return true
    }

    /// The progress line: what was received so far, or a bar of what was sent of all there
    /// is to send (`taskctl: sync: sending [=====>    ] 4,000 of 10,000 changes`).
    static func progressLine(_ progress: SyncProgress, width: Int) -> String {
        func count(_ n: Int) -> String {
            let digits = String(n)
            var out = ""
            for (index, character) in digits.enumerated() {
                if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
                out.append(character)
            }
            return out
        }
        let plural = { (n: Int, word: String) in "\(count(n)) \(word)\(n == 1 ? "" : "s")" }
        guard progress.phase == .sending, let total = progress.total, total > 0 else {
            return "taskctl: sync: received \(plural(progress.changes, "change")) in \(plural(progress.versions, "version"))"
        }
        let tail = " \(count(progress.changes)) of \(plural(total, "change"))"
        // As wide as the line allows when all is sent, so the bar keeps its width.
        let widest = " \(count(total)) of \(plural(total, "change"))"
        let barWidth = max(10, min(40, width - 24 - widest.count))
        let filled = min(barWidth, progress.changes * barWidth / total)
        let bar = String(repeating: "=", count: filled) + (filled < barWidth ? ">" + String(repeating: " ", count: barWidth - filled - 1) : "")
        return "taskctl: sync: sending [\(bar)]" + tail
    }

    /// The git repository the settings name (TaskChampion's git layout), opened or cloned at
    /// the sync.
    static func gitRemote(_ app: App) throws -> SyncRemote {
        guard let path = app.config.syncGitPath, let secret = app.config.syncSecret else {
            throw CLIError.usage("sync through git needs sync.git.local_path and sync.encryption_secret in \(Config.path(environment: app.environment)) (see 'taskctl help sync')")
        }
        return SyncRemote.git(localPath: URL(fileURLWithPath: path), remote: app.config.syncGitRemote, branch: app.config.syncGitBranch ?? "main",
                              encryptionSecret: secret, keyCache: try keyCacheURL(app))
    }

    /// The S3 bucket the settings name (TaskChampion's bucket layout): its salt is read (or
    /// written, by the first replica) at the sync, and the key derived with it.
    static func bucketRemote(_ app: App, transport: HelperTransport) throws -> SyncRemote {
        let path = Config.path(environment: app.environment)
        guard let name = app.config.syncAWSBucket, let secret = app.config.syncSecret else {
            throw CLIError.usage("sync through S3 needs sync.aws.bucket and sync.encryption_secret in \(path) (see 'taskctl help sync')")
        }
        let credentials = try AWSSettings.credentials(app.config, environment: app.environment, configPath: path)
        return SyncRemote.bucket(name, region: AWSSettings.region(app.config, environment: app.environment),
                                 endpoint: try AWSSettings.endpoint(app.config, environment: app.environment),
                                 forcePathStyle: app.config.syncAWSForcePathStyle,
                                 accessKeyID: credentials.accessKeyID, secretAccessKey: credentials.secretAccessKey, sessionToken: credentials.sessionToken,
                                 encryptionSecret: secret, keyCache: try keyCacheURL(app), transport: SyncTransport(transport))
    }

    static func status(_ engine: SyncEngine, app: App) throws {
        let status = try engine.status()
        guard let server = status.server else {
            app.output.line("not synced yet; 'taskctl sync' sends every task")
            return
        }
        app.output.line("server: \(Redaction.userinfo(in: server))")
        app.output.line("server version: \(status.baseVersion.map { $0.uuidString.lowercased() } ?? "none")")
        if let last = status.lastSync { app.output.line("last sync: \(ISO8601.format(last))") }
        if let count = status.unsyncedTransactions {
            app.output.line("local changes not sent: \(count)")
        } else {
            app.output.line("local changes not sent: every task (the history no longer reaches back to the last sync)")
        }
    }

    /// The server the settings name, with the key of the encryption secret (derived once and
    /// kept in an owner-only file under the user's cache directory).
    static func serverRemote(_ app: App, transport: HelperTransport) throws -> SyncRemote {
        let path = Config.path(environment: app.environment)
        guard let urlText = app.config.syncServerURL, let url = URL(string: urlText),
              let clientText = app.config.syncClientID, let clientID = UUID(uuidString: clientText),
              let secret = app.config.syncSecret else {
            let missing = [("sync.server.url", app.config.syncServerURL), ("sync.server.client_id", app.config.syncClientID),
                           ("sync.encryption_secret", app.config.syncSecret)].filter { $0.1 == nil }.map(\.0)
            throw CLIError.usage("sync needs \(missing.joined(separator: ", ")) in \(path) (see 'taskctl help sync')")
        }
        return SyncRemote.server(url: url, clientID: clientID, encryptionSecret: secret, keyCache: try keyCacheURL(app), transport: SyncTransport(transport))
    }

    /// `$XDG_CACHE_HOME/taskctl/sync-key` (or `~/.cache/taskctl/sync-key`), its folder
    /// made owner-only.
    static func keyCacheURL(_ app: App) throws -> URL {
        let base: String
        if let xdg = app.environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            base = xdg
        } else {
            base = (app.environment["HOME"] ?? NSHomeDirectory()) + "/.cache"
        }
        let directory = URL(fileURLWithPath: base).appendingPathComponent("taskctl")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return directory.appendingPathComponent("sync-key")
    }
}
