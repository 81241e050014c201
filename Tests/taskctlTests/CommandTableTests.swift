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

    /// Dispatch knows the built-in reports by their names alone; each name is a report, a
    /// command, and its help and summary are the report's.
    @Test func theReportNamesAreTheBuiltInReports() throws {
        #expect(ReportDefinition.builtInNames == ReportDefinition.builtIn.keys.sorted())
        for name in ReportDefinition.builtInNames {
            let command = try #require(CommandDefinition.named(name))
            let report = try #require(ReportDefinition.builtIn[name])
            #expect(command.summary == "Taskwarrior's \(name) report: \(report.description.lowercased())")
            #expect(command.help.contains("columns  \(report.columns.joined(separator: ","))"), "\(command.help)")
            #expect(CommandWords.filtered.contains(name))
        }
    }

    @Test func aReportCannotTakeAnOwnCommandsName() throws {
        let t = try TaskctlRunner()
        let result = try t.run("rc.report.add.columns=id", "list")
        #expect(result.status != 0 && result.err.contains("add"), "\(result.out) \(result.err)")
    }
}
