import Foundation
import Testing
@testable import taskctl

@Suite struct ManualTests {
    @Test func theManualRepeatsEveryCommandsHelp() throws {
        let manual = try String(contentsOf: TaskctlRunner.repository.appendingPathComponent("docs/taskctl.md"), encoding: .utf8)
        for (topic, text) in Help.commands {
            #expect(manual.contains("```\n" + text + "\n```"), "docs/taskctl.md is missing or has an old copy of 'taskctl help \(topic)'")
        }
    }
}
