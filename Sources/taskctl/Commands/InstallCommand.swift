import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `taskctl install [--prefix DIR]` puts this taskctl (and its network helper), its manual page and its completions
/// where shells and `man` look (PREFIX, default ~/.local); `taskctl uninstall` takes them
/// away again. The store is never touched.
enum InstallCommand {
    /// The files an installation writes, relative to PREFIX, and what each holds.
    static func files() -> [(path: String, contents: Data?, mode: mode_t)] {
        // zsh autoloads a function file named after the function, starting "#compdef".
        let zshBody = CompletionCommand.zsh.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
        let zshFunction = "#compdef taskctl\n" + zshBody.replacingOccurrences(of: "compdef _taskctl taskctl", with: "_taskctl \"$@\"")
        return [
            ("bin/taskctl", nil, 0o755),  // this executable
            ("bin/taskctl-http", nil, 0o755),  // its network helper, from beside it
            ("share/man/man1/taskctl.1", Data(Help.manPage.utf8), 0o644),
            ("share/bash-completion/completions/taskctl", Data((CompletionCommand.bash + "\n").utf8), 0o644),
            ("share/zsh/site-functions/_taskctl", Data((zshFunction + "\n").utf8), 0o644),
            ("share/fish/vendor_completions.d/taskctl.fish", Data((CompletionCommand.fish + "\n").utf8), 0o644),
        ]
    }

    static func prefix(_ args: Arguments, environment: [String: String]) -> URL {
        if let given = args.value("prefix") { return URL(fileURLWithPath: given) }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local")
    }

    static func install(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "install")
        try args.allowWords(0, command: "install")
        let prefix = prefix(args, environment: app.environment)
        guard let executable = Bundle.main.executablePath ?? CommandLine.arguments.first,
              let binary = FileManager.default.contents(atPath: executable)
        else { throw CLIError.store("cannot read this taskctl's own executable to copy it") }
        // Sync's network helper, when it was built: without it everything but sync works.
        let helper = HelperTransport.locate().flatMap { FileManager.default.contents(atPath: $0.path) }
        for file in files() {
            if file.path == "bin/taskctl-http" && helper == nil {
                app.output.line("taskctl-http is not beside \(executable), so taskctl sync will not work: build it (swift build -c release --static-swift-stdlib --product taskctl-http) and install again")
                continue
            }
            let target = prefix.appendingPathComponent(file.path)
            do {
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                // Written beside and renamed over, so a running taskctl is never half replaced.
                let temporary = target.path + ".tmp-\(getpid())"
                try (file.contents ?? (file.path == "bin/taskctl-http" ? helper ?? binary : binary)).write(to: URL(fileURLWithPath: temporary))
                chmod(temporary, file.mode)
                guard rename(temporary, target.path) == 0 else {
                    let reason = String(cString: strerror(errno))
                    unlink(temporary)
                    throw CLIError.store("cannot install \(target.path): \(reason)")
                }
            } catch let error as CLIError {
                throw error
            } catch {
                throw CLIError.store("cannot install \(target.path): \(error.localizedDescription)")
            }
            app.output.line("installed \(target.path)")
        }
        let bin = prefix.appendingPathComponent("bin").path
        if !(app.environment["PATH"] ?? "").split(separator: ":").contains(Substring(bin)) {
            app.output.line("add \(bin) to PATH to run taskctl from anywhere")
        }
        app.output.line("zsh finds the completion once \(prefix.appendingPathComponent("share/zsh/site-functions").path) is in fpath; taskctl uninstall\(args.value("prefix").map { " --prefix \($0)" } ?? "") removes it all")
    }

    static func uninstall(_ words: [String], _ app: App) throws {
        let args = try Arguments(words, for: "uninstall")
        try args.allowWords(0, command: "uninstall")
        let prefix = prefix(args, environment: app.environment)
        var removed = 0
        for file in files() {
            let target = prefix.appendingPathComponent(file.path)
            guard FileManager.default.fileExists(atPath: target.path) else { continue }
            guard unlink(target.path) == 0 else { throw CLIError.store("cannot remove \(target.path): \(String(cString: strerror(errno)))") }
            app.output.line("removed \(target.path)")
            removed += 1
        }
        if removed == 0 { app.output.line("nothing of taskctl is installed under \(prefix.path)") }
        app.output.line("the store and the configuration are left as they are")
    }
}
