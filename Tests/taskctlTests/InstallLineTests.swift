import Foundation
import Testing
@testable import taskctl

/// README's install line passes the compiler a frontend option (`-Xfrontend ...`), which the
/// compiler does not promise to keep: this fails on a toolchain that no longer lists it, so
/// the line is mended before a user meets the refusal, and it holds `taskctl help install`
/// to the same options.
@Suite struct InstallLineTests {
    /// The compiler beside the `swift` command the package tests use.
    static let swiftc: URL? = ModelPluginBuildTests.swift.map { $0.deletingLastPathComponent().appendingPathComponent("swiftc") }
        .flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil }

    /// The words after each `-Xfrontend -Xswiftc` in `text`.
    static func frontendOptions(in text: String) -> [String] {
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        return words.indices.dropLast(2).compactMap { index in
            words[index] == "-Xfrontend" && words[index + 1] == "-Xswiftc" ? words[index + 2] : nil
        }
    }

    @Test(.enabled(if: swiftc != nil, "needs the swiftc command"))
    func theInstallLinesFrontendOptionsAreTheCompilers() throws {
        let readme = try String(contentsOf: TaskctlRunner.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let options = Self.frontendOptions(in: readme)
        try #require(!options.isEmpty, "README's install line passes no frontend option")
        let help = try #require(CommandDefinition.named("install")).help
        #expect(Self.frontendOptions(in: help) == options, "taskctl help install: \(help)")

        let swiftc = try #require(Self.swiftc)
        let listed = try ModelPluginBuildTests.run(swiftc, ["-frontend", "-help-hidden"], stderr: true).output
        for option in options {
            #expect(listed.split(whereSeparator: \.isWhitespace).contains { $0 == option }, "the compiler no longer lists \(option)")
        }
    }
}
