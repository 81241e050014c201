/// Help for every command: `taskctl help COMMAND` and `taskctl COMMAND --help` print the
/// same text, which docs/taskctl.md repeats.
enum Help {
    static let overview = """
        taskctl: tasks with priorities, due dates and locations.

        usage: taskctl [--store PATH] [COMMAND] [OPTIONS]     (no command: list)

        commands:
        \(commandLines)

        Global options: --store PATH, --color auto|always|never, --version.

        The store is --store PATH, else $TASKCTL_STORE, else $XDG_DATA_HOME/taskctl/tasks.store
        (~/.local/share/taskctl/tasks.store); a .json path gives a readable JSON store.
        Settings (store, color, sort, dateformat) may also come from $XDG_CONFIG_HOME/taskctl/config
        (~/.config/taskctl/config), one 'key = value' a line; options and variables win.
        TASKCTL_NOW fixes the clock (ISO-8601); TZ sets the time zone; a non-empty NO_COLOR turns
        colour off (as --color never). Output to a pipe is never cut to the terminal's width.
        Exit status: 0 success, 1 usage or validation error, 2 store problem.
        """

    /// The overview's list of commands, from ``CommandDefinition/all``.
    static var commandLines: String {
        let lines = CommandDefinition.all.compactMap { command in command.synopsis.map { ($0, command.summary) } }
            + [("help [TOPIC]", "this help, a command's, or 'help dates'")]
        return lines.map { "  " + $0.0.padding(toLength: 20, withPad: " ", startingAt: 0) + $0.1 }.joined(separator: "\n")
    }

    /// `taskctl help help`.
    static let helpText = """
        usage: taskctl help [COMMAND | dates | man]

        Prints the overview, a command's help (the same as taskctl COMMAND --help),
        the date forms taskctl reads (help dates), or all of it as a manual page in
        roff (taskctl help man > taskctl.1; man ./taskctl.1).
        """

    /// `taskctl help dates`.
    static let dates = """
        Dates:
          2026-12-01          the end of that day (23:59:59)
          2026-12-01T14:30    that time (local; add Z or +02:00 for another zone)
          today, eod          the end of today
          tomorrow, yesterday the end of that day
          monday ... sunday   the end of the next such day (mon, tue, ... work too)
          eow, eom, eoq, eoy  the end of this week (Sunday), month, quarter, year
          sod, sow, som, soq, soy  the start (00:00) of this day, week (Monday), month,
                              quarter, year
          15th, 1st, 22nd     the end of the next day of that number
          later, someday      9999-12-30 (a date that does not come)
          3d, +2w, -1d        days or weeks from now, at the end of that day
          1m, 1y              months or years from now, at the end of that day
          4h, -2h             hours from now, exactly
          P3D, PT2H, P1Y2M    ISO 8601 durations from now, exactly, as Taskwarrior reads
                              them (a month is 30 days, a year 365)
          20261201T143000Z    Taskwarrior's own form (UTC)
          now                 now
        Times are in the time zone from TZ; TASKCTL_NOW fixes "now". --wait and --scheduled
        take a day without a time as the start of that day.
        """

    /// Every help topic: each command's (from ``CommandDefinition``), help's and dates'.
    static var commands: [String: String] {
        var texts = Dictionary(uniqueKeysWithValues: CommandDefinition.all.map { ($0.name, $0.help) })
        texts["help"] = helpText
        texts["dates"] = dates
        return texts
    }

    /// The manual page, in roff, made from the same texts as `taskctl help`:
    /// `taskctl help man > taskctl.1`.
    static var manPage: String {
        func escape(_ text: String) -> String {
            text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                let escaped = line.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
                return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
            }.joined(separator: "\n")
        }
        var page = ".TH TASKCTL 1 \"\" \"taskctl \(TaskCtl.version)\" \"User Commands\"\n"
        page += ".SH NAME\ntaskctl \\- tasks with priorities, due dates and locations\n"
        page += ".SH SYNOPSIS\n.nf\n" + escape(overview) + "\n.fi\n"
        page += ".SH COMMANDS\n"
        for name in TaskCtl.commandNames {
            guard let text = commands[name] else { continue }
            page += ".SS \(name)\n.nf\n" + escape(text) + "\n.fi\n"
        }
        if let dates = commands["dates"] { page += ".SH DATES\n.nf\n" + escape(dates) + "\n.fi\n" }
        return page
    }

    static func text(for command: String) -> String? {
        if command == "man" { return manPage }
        return commands[command]
    }
}
