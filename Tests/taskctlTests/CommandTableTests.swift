import Foundation
import Testing
@testable import taskctl

/// The settings sit below the command table (docs/ARCHITECTURE.md), so they keep their own
/// list of taskctl's commands; this holds it to the table.
@Suite struct CommandTableTests {
    @Test func theSettingsNameEveryOwnCommand() {
        let table = Set(TaskCtl.commandNames).filter { ReportDefinition.builtIn[$0] == nil }
        #expect(Config.ownCommandNames == table, "missing: \(table.subtracting(Config.ownCommandNames).sorted()), extra: \(Config.ownCommandNames.subtracting(table).sorted())")
    }

    @Test func aReportCannotTakeAnOwnCommandsName() throws {
        let t = try TaskctlRunner()
        let result = try t.run("rc.report.add.columns=id", "list")
        #expect(result.status != 0 && result.err.contains("add"), "\(result.out) \(result.err)")
    }
}
