/// Help for every command: `taskctl help COMMAND` and `taskctl COMMAND --help` print the
/// same text, which docs/taskctl.md repeats.
enum Help {
    static let overview = """
        taskctl: tasks with priorities, due dates and locations.

        usage: taskctl [--store PATH] [FILTER] [COMMAND] [OPTIONS]   (no command: list)
               (Taskwarrior's grammar and filters: taskctl help filters)

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
            + [("REPORT", "Taskwarrior's reports: " + ReportDefinition.builtIn.keys.sorted().joined(separator: ", ")),
               ("INFORMATION", "Taskwarrior's: " + CommandDefinition.information.map(\.name).joined(separator: ", ")),
               ("help [TOPIC]", "this help, a command's, or: dates, filters, reports, recurrence")]
        return lines.map { "  " + $0.0.padding(toLength: 20, withPad: " ", startingAt: 0) + $0.1 }.joined(separator: "\n")
    }

    /// `taskctl help help`.
    static let helpText = """
        usage: taskctl help [COMMAND | dates | filters | reports | recurrence | man]

        Prints the overview, a command's help (the same as taskctl COMMAND --help),
        the date forms taskctl reads (help dates), Taskwarrior's command language as
        taskctl reads it (help filters), its reports, urgency and dependencies (help
        reports), recurring tasks (help recurrence), or all of it as a manual page in roff
        (taskctl help man > taskctl.1; man ./taskctl.1).
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
        take a day without a time as the start of that day. With the setting dateformat
        (D.M.Y, say), a date typed in that form is read too (24.12.2026).
        """

    /// `taskctl help filters`: Taskwarrior's command language as taskctl reads it.
    static let filters = """
        Taskwarrior's command language:
          taskctl [FILTER] COMMAND [WORDS]      as task(1): taskctl 12 done, taskctl +work list,
                                                taskctl project:home modify +x, taskctl 1-3 done
          taskctl FILTER                        a filter alone lists (ids alone: show them)
        Commands that take a filter before them: list, export, show, done, delete, reopen, start,
        stop, annotate, denotate, edit, modify, append, prepend, duplicate, count, ids, uuids,
        _ids, _uuids, and the reports (taskctl help reports). log TEXT records a task done already;
        info is show, rm is delete. A command may be shortened to its first letters while only
        one command starts with them (mod, ann). Taskwarrior's commands taskctl does not have
        yet (calendar, burndown, timesheet, ...) are refused by name, never searched for.

        Filters (the words are joined by 'and' unless 'or' or 'xor' stands between them;
        parentheses group, as '(' +a or +b ')' or "(+a or +b)"; 'and' binds before 'or', 'or'
        before 'xor'):
          12  1-3  1,3,5  UUID  8+ hex digits   ids, ranges, lists, UUIDs and their starts
          +tag  -tag                            with, without a tag (or a virtual tag below)
          NAME:VALUE  NAME.MODIFIER:VALUE       an attribute: description, project, priority,
                                                status, due, wait, scheduled, until, start, end,
                                                entry, tags, recur, uuid, id, location, depends, parent,
                                                mask, rtype, a UDA (two letters or more of a name do:
                                                pro:, pri:)
          /pattern/                             a regular expression in the text or an annotation
          word                                  the same, as text (Taskwarrior's plain search)
        NAME:VALUE is Taskwarrior's partial match: text starting with VALUE (project:home is home,
        home.garden and homework), a date on that day (due:today), a priority or status that is
        VALUE. Modifiers: before/under/below, after/over/above, by (at or before), is/equals,
        not (no partial match), isnt (not exactly), has/contains, hasnt, startswith/left,
        endswith/right, word, noword, any, none. Dates in filters read as Taskwarrior reads them:
        a day is its first second (due.before:friday), eod/eow/eom/eoq/eoy the last second, and
        durations add or subtract: now+3d, eom-1w, tomorrow+2d. Priority orders high > medium >
        low > none (priority.above:M is high). Text matches case as written unless
        search.case.sensitive=no; tag, project and location names ignore case.
        Virtual tags (Taskwarrior 2.6's): ACTIVE (started), ANNOTATED, BLOCKED and BLOCKING and
        UNBLOCKED (dependencies: taskctl help reports), CHILD and INSTANCE (of a recurring
        template), COMPLETED, DELETED, DUE (due from today's start to 7 days after it), DUETODAY
        and TODAY, TOMORROW, YESTERDAY, WEEK, MONTH, QUARTER, YEAR (due in this one; weeks
        Monday-Sunday), LATEST (the last task added), ORPHAN (a field no attribute names),
        OVERDUE, PARENT and TEMPLATE, PENDING (not waiting), PRIORITY, PROJECT, READY (pending,
        not waiting, not blocked, scheduled passed or none), SCHEDULED, TAGGED, UDA (priority:
        taskctl has no other user-defined attribute), UNTIL, WAITING. Other upper-case tags are
        refused: Taskwarrior reserves them.

        modify WORDS: attribute words change fields (pri:H, due:fri, +tag, -tag, project:,
        depends:3,-4, an empty value clears); other words replace the text; /from/to/ replaces the first
        'from', /from/to/g every one; status:pending|completed|deleted sets the status; a date
        may count from the task's own (due:due+1d, wait:due-2d); after -- every word is text.
        append and prepend add words.
        Changing 3 tasks or more at once (the setting bulk) asks first, reading the answer from
        the standard input; no answer changes nothing. --yes answers yes; rc.bulk=0 never asks.
        FILTER done, delete and reopen (and edit --where of --priority, --text and --no-due)
        change the store in one batch without loading the tasks, unless a recurring task, one
        with until, or one with Taskwarrior's modified time is among them.

        Settings for one command: rc.NAME=VALUE (or rc.NAME:VALUE) before or after the command,
        rc:FILE for another settings file. ~/.taskrc (or TASKRC) is read first for the settings
        below and sync.*; the rest of it is Taskwarrior's alone and passed over. Besides taskctl's own (store, color, sort,
        dateformat, sync.*): bulk, confirmation, search.case.sensitive, default.project,
        uda.priority.default, default.due, default.command, context, urgency.* and report.*
        (taskctl help reports), and user-defined attributes
        (uda.NAME.type = string|numeric|date|duration, .label, .values, .default): NAME:VALUE
        sets one, NAME.MODIFIER:VALUE filters by it, +UDA finds tasks with one. A setting taskctl does not have is refused.
        Contexts (taskctl help context): a context's filter joins list's and that of every
        command given a filter; add takes its attributes.

        Differences from Taskwarrior, each on purpose:
          ids never change (done and deleted tasks keep theirs); Taskwarrior renumbers pending
            tasks, so an id there may name another task tomorrow
          tag, project and location names match ignoring case ("Home" is home): one name,
            however typed, as location names are unique ignoring case
          a date without a time is the end of that day when it is set (due:friday is due by
            Friday night; Taskwarrior: Friday 00:00); in a filter it is the day's start, as there
          list with a filter naming a status (status:completed, +COMPLETED, +DELETED, +WAITING)
            lists those tasks; Taskwarrior's list keeps its own status:pending and lists none
          delete does not ask first: undo brings a deleted task back
          a high-priority task needs a due date (taskctl's own rule, to keep high meaning soon)
          a context applies to every command given a filter; Taskwarrior 2.6.2 applies it to
            done, delete, prepend, start and stop but not to modify, append or annotate
          config NAME reads a setting (Taskwarrior's removes it; taskctl: config --unset NAME)
          status.not:pending and +ACTIVE also find done and deleted tasks (Taskwarrior's
            gc=on shortcut reads only pending tasks for them)
          a weekly series keeps its clock time across a change of the clocks
          a recurring task's instances are made by the next command that changes something (or
            sync), not before a report; reports and lists change nothing
        """

    /// `taskctl help reports`: Taskwarrior's reports, urgency and dependencies.
    static var reports: String {
        """
        Taskwarrior's reports: taskctl [FILTER] REPORT [FILTER]
          \(ReportDefinition.builtIn.keys.sorted().joined(separator: ", "))
        Each lists what Taskwarrior 2.6's report of that name lists, in its order: the report's
        filter and the line's, its sort keys, its columns (taskctl help next shows them).
        A column no task fills is left out; nothing to list is 'no matches' and exit status 1,
        as in Taskwarrior. taskctl's own list keeps its name, columns and order.

        Settings (in taskctl's config, ~/.taskrc or rc.NAME=VALUE):
          report.NAME.columns      id, uuid, description, project, tags, priority, status,
                                   depends, recur, urgency, parent, location, entry, start, end,
                                   due, wait, scheduled, until, modified, or a user-defined
                                   attribute; with a style: due.relative, tags.count, ...
                                   (dates: formatted, iso, epoch, julian, age, relative,
                                   remaining, countdown; description: combined, desc, oneline,
                                   count; project: full, parent, indented; uuid: long, short;
                                   depends, tags: list, count, indicator; status: long, short)
          report.NAME.labels       one per column
          report.NAME.sort         keys with + or - (urgency-,due+); / after a key puts a blank
                                   line where its value changes; none: no sort
          report.NAME.filter       a filter (status:pending +work)
          report.NAME.description  its line in help
        A NAME of its own defines a new report, run as taskctl NAME. default.command names what
        taskctl with no command runs (list unless set; Taskwarrior's default is next).
        limit:N shows the first N; limit:page as many as the terminal's height holds.

        Urgency, as Taskwarrior 2.6 computes it (single precision, age in whole days): the sum
        of each term (0 to 1) times its coefficient, urgency.TERM.coefficient: due 12 (0.2 two
        weeks ahead to 1 a week overdue), blocking 8, scheduled 5 (passed), active 4, age 2
        (over urgency.age.max days, 365), annotations 1, tags 1, project 1, waiting -3, blocked
        -5; plus urgency.user.tag.NAME.coefficient (next: 15), urgency.user.project.NAME
        .coefficient (and its subprojects), urgency.user.keyword.WORD.coefficient (in the text),
        urgency.uda.NAME.coefficient (has one) and urgency.uda.NAME.VALUE.coefficient (priority
        H 6, M 3.9, L 1.8). A done or deleted task's urgency is 0 (Taskwarrior computes one that
        no report of it shows); urgency.inherit is not supported.

        Dependencies: depends:ID,ID (ids, ranges, UUIDs or their first 8 hex digits) in add,
        modify and edit (--depends); depends:-ID removes one, depends: all. A task cannot
        depend on itself or on a task that depends on it (directly or through others). A task
        is blocked (+BLOCKED) while a task it depends on is pending or waiting; that one is
        blocking (+BLOCKING). Done, a blocker blocks no more. Dependencies are kept as
        Taskwarrior keeps them, by UUID (export, import and sync carry them): one on a task
        this replica has not received yet holds once that task arrives. show lists a task's
        dependencies by id and the tasks waiting for it.
        """
    }

    /// `taskctl help recurrence`: recurring tasks as Taskwarrior keeps them.
    static let recurrence = """
        Recurring tasks, as Taskwarrior 2.6 keeps them:
          taskctl add Water plants due:2026-12-01T09:00 recur:weekly [until:DATE]
        makes a template (status recurring: not listed, not done; taskctl all and recurring
        show it) and its instances, pending tasks cloned from it, one for each due date from
        the template's up to and including the first after now (recurrence.limit of them after
        now, 1 unless set). add prints the first pending instance's id. Done or deleted, an
        instance is marked so in its template's mask (+ done, X deleted, - pending, W made
        waiting); the instances of later dates are made by the next command that changes
        anything (Taskwarrior makes them before a report; a large import leaves them to the
        next change) and by sync. In a store of more than 100,000 tasks a change makes only
        the series it touches (done on an instance, a change to a template), and sync every
        series: reading every task at every change would cost each command a second. A change to the template
        reaches the instances made after it. until ends the series: the first date past it is
        the last instance made, and instances expire once it has passed, as in Taskwarrior.
        An instance of a template with a wait waits as long before its own due date.

        Periods, as Taskwarrior counts them: daily, weekly, biweekly, fortnight, weekdays
        (Monday to Friday), monthly, bimonthly, quarterly, semiannual, yearly, annual,
        biyearly; Nm (months), Nq (quarters), PnM (months, at midnight, as Taskwarrior's),
        P1Y, P2Y; any other duration is that long: 3d, 2w, 2mo and 1mth (30 days each), P1W,
        1y (365 days). A month's day past the next month's last falls on that last day; the
        29th of February yearly falls on the 28th. Whole days keep the clock time across a
        change of the clocks (Taskwarrior adds 24-hour days).

        Each instance's UUID is named after its template and its place in the series (UUIDv5),
        so two taskctl replicas that make the same instance make one task. Templates and
        instances travel over sync as Taskwarrior 3 keeps them (status recurring, mask, rtype,
        parent, imask), so a series made on either side recurs the same on every replica.
        recurrence=off (a setting) makes no instances.

        A store of taskctl 0.3 kept a recurring task as one pending task with its period; the
        next change makes it a template, as Taskwarrior's validation does, and its instances
        (the task's id is then the template's; its first instance gets a new one).
        """

    /// Every help topic: each command's (from ``CommandDefinition``), help's and dates'.
    static var commands: [String: String] {
        var texts = Dictionary(uniqueKeysWithValues: CommandDefinition.all.map { ($0.name, $0.help) })
        texts["help"] = helpText
        texts["dates"] = dates
        texts["filters"] = filters
        texts["reports"] = reports
        texts["recurrence"] = recurrence
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
        page += ".SH FILTERS\n.nf\n" + escape(filters) + "\n.fi\n"
        page += ".SH REPORTS\n.nf\n" + escape(reports) + "\n.fi\n"
        page += ".SH RECURRENCE\n.nf\n" + escape(recurrence) + "\n.fi\n"
        return page
    }

    static func text(for command: String) -> String? {
        if command == "man" { return manPage }
        return commands[command]
    }
}
