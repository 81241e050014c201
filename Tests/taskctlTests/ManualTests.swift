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

/// Dispatch, help, the manual page and completion all come from one definition per command.
@Suite struct CommandDefinitionTests {
    @Test func everyCommandIsDefinedOnceAndEverythingIsMadeFromIt() throws {
        let names = CommandDefinition.all.map(\.name)
        #expect(Set(names).count == names.count, "a command defined twice")
        let page = Help.manPage
        for command in CommandDefinition.all {
            // Its help, its section of the manual, its line (or a mention) in the overview.
            #expect(Help.text(for: command.name) == command.help)
            #expect(["usage: taskctl \(command.name)", "usage: taskctl [FILTER] \(command.name)", "usage: taskctl FILTER \(command.name)"]
                .contains(where: command.help.hasPrefix), "\(command.name)")
            #expect(page.contains(".SS \(command.name)\n"), "\(command.name)")
            if let synopsis = command.synopsis {
                #expect(Help.overview.contains("\n  " + synopsis.padding(toLength: 20, withPad: " ", startingAt: 0) + command.summary + "\n"), "\(command.name)")
            } else {
                #expect(Help.overview.contains(command.name), "\(command.name) is named nowhere in the overview")
            }
            // Completion offers exactly the options its words are read with.
            #expect(CompletionCommand.options(of: command.name) == command.options)
            for option in command.valued {
                // A value the declaration allows (its first choice, or any text).
                var allowed = "x"
                if case .choice(let words) = OptionValue.of(option) { allowed = words[0] }
                #expect(throws: Never.self) { try Arguments(["--" + option, allowed], for: command.name) }
            }
            for option in command.switches {
                #expect(throws: Never.self) { try Arguments(["--" + option], for: command.name) }
            }
            #expect(throws: CLIError.self) { try Arguments(["--no-such-option"], for: command.name) }
            // Each value an option is declared to take, and each subcommand, is in the help;
            // a value outside the declaration is refused.
            for option in command.valued {
                guard case .choice(let words) = OptionValue.of(option) else { continue }
                for word in words { #expect(command.help.contains(word), "taskctl help \(command.name) names no '\(word)' for --\(option)") }
                #expect(throws: CLIError.self) { try Arguments(["--" + option, "no-such-value"], for: command.name) }
            }
            for word in OptionValue.subcommands[command.name] ?? [] where command.name != "help" {
                #expect(command.help.contains(word), "taskctl help \(command.name) names no '\(word)'")
            }
        }
    }
}
