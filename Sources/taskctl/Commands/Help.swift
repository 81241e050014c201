/// Help for every command: `taskctl help COMMAND` and `taskctl COMMAND --help` print the
/// same text, which docs/taskctl.md repeats.
enum Help {
    static let overview = """
        taskctl: tasks with priorities, due dates and locations.

        usage: taskctl [--store PATH] [COMMAND] [OPTIONS]     (no command: list)

        commands:
          add TEXT            add a task and print its id
          list                list tasks (pending by default)
          show ID             show one task
          edit ID...          change tasks (or every task --where PREDICATE matches)
          done ID...          mark tasks done (a recurring task makes its next one)
          reopen ID...        mark done tasks pending again
          delete ID...        delete tasks
          start ID...         mark tasks as being worked on (stop ID... ends that)
          annotate ID TEXT    add a dated note to a task
          undo                revert the last change made by any taskctl command
          locations           list locations with task counts and high-priority tasks
          location            add, rename or delete a location
          import FILE         import taskctl JSON, Taskwarrior JSON or todo.txt
          export              export tasks (taskctl JSON, Taskwarrior JSON or todo.txt)
          agenda              the next weeks at a glance, or a month (--month)
          stats               counts, tasks done per week, ages, by project and location
          store               store info | check | compact
          migrate             migrate an older store (--dry-run shows the plan)
          completion SHELL    a completion script for bash, zsh or fish
          install             put taskctl, its manual and completions under ~/.local (uninstall)
          help [TOPIC]        this help, a command's, or 'help dates'

        Global options: --store PATH, --color auto|always|never, --version.

        The store is --store PATH, else $TASKCTL_STORE, else $XDG_DATA_HOME/taskctl/tasks.store
        (~/.local/share/taskctl/tasks.store); a .json path gives a readable JSON store.
        Settings (store, color, sort, dateformat) may also come from $XDG_CONFIG_HOME/taskctl/config
        (~/.config/taskctl/config), one 'key = value' a line; options and variables win.
        TASKCTL_NOW fixes the clock (ISO-8601); TZ sets the time zone; a non-empty NO_COLOR turns
        colour off (as --color never). Output to a pipe is never cut to the terminal's width.
        Exit status: 0 success, 1 usage or validation error, 2 store problem.
        """

    static let commands: [String: String] = [
        "add": """
            usage: taskctl add TEXT [--priority P] [--due DATE] [--location NAME] [--project NAME] [--tag TAG]
                                    [--wait DATE] [--scheduled DATE] [--recur PERIOD] [--until DATE] [--json]

            Adds a pending task and prints its id (the whole task with --json).
              --priority P      none, low, medium, high (or n, l, m, h, 0-3); default none
              --due DATE        see 'Dates' in taskctl help dates
              --location NAME   created when new
              --project NAME    created when new
              --tag TAG         a tag; repeat with commas: --tag a,b
              --wait DATE       hidden from the pending list until then (a bare day: its start)
              --scheduled DATE  when work may start; once it has, the task is more urgent
              --recur PERIOD    daily, weekly, biweekly, monthly, quarterly, yearly, or 3d, 2w, 6m, 1y:
                                marking it done adds the next one (needs --due)
              --until DATE      the last due date the recurrence makes; without --recur, when
                                the task expires (deleted, as in Taskwarrior)
            A high-priority task needs a due date.
            Taskwarrior's words work too: taskctl add Buy milk +shopping due:tomorrow pri:H
            (also project:, loc:, wait:, scheduled:, recur:, until:). Attributes taskctl lacks
            (depends:...) are refused, never stored as text; after -- every word is text.
            """,
        "list": """
            usage: taskctl list [--all|--done] [--priority P] [--location NAME] [--project NAME] [--tag TAG]
                                [--overdue] [--due-before DATE] [--due-after DATE] [--where PREDICATE]
                                [--sort KEYS] [--group-by location|priority|due|project] [--limit N] [--json]

            Lists pending tasks by default; --done lists done ones, --all both.
              --where PREDICATE  the predicate language over Task, e.g.
                                 "priority >= 2 AND location.name ==[c] 'home'"
              --sort KEYS        comma-separated keys, '-' for descending: due,-priority
                                 (keys: urgency, id, text, priority, due, location, project,
                                 created, status; urgency is most urgent first unless +urgency)
              --group-by KEY     sections with headers and counts (of every match, before --limit);
                                 with --json, [{"group", "count", "tasks"}]
              --limit N          at most N tasks
            Default order: most urgent first (Taskwarrior's urgency, its default coefficients:
            due date, priority, started, scheduled, age, tags, annotations, project, waiting),
            then due soonest, priority (high first), id. Waiting tasks are not listed (--all shows them).
            Taskwarrior's filters work too: +tag (several: all of them), -tag (without it),
            project:NAME, pri:H, loc:NAME, status:pending|completed|deleted|waiting,
            due.before:DATE, due.after:DATE, due.by:DATE, project.not:NAME,
            description.contains:TEXT, and the virtual tags +OVERDUE, +TODAY, +TOMORROW,
            +WEEK (Monday to Sunday), +DUE (from today to 7 days ahead), +WAITING, +ACTIVE.
            Tag, project and location names match ignoring case (Taskwarrior matches exactly).
            """,
        "show": """
            usage: taskctl show ID [--deleted] [--json]

            Shows one task. ID is the task's number, its UUID or a unique UUID prefix.
            A deleted task is shown only with --deleted (or --all); otherwise it is an error.
            """,
        "edit": """
            usage: taskctl edit ID... [--text T] [--priority P] [--due DATE | --no-due]
                                      [--location NAME | --no-location] [--project NAME | --no-project]
                                      [--tag TAG] [--untag TAG] [--wait DATE | --no-wait]
                                      [--scheduled DATE | --no-scheduled] [--recur PERIOD | --no-recur]
                                      [--until DATE | --no-until] [--json]
                   taskctl edit --where PREDICATE [changes as above] [--yes]

            Changes tasks; options not given stay as they are. At least one change is
            needed. Prints each task's id and text (the whole task with --json).
            --where changes every pending task the predicate matches (as in list --where).
            More than 3 tasks at once are confirmed first on a terminal; elsewhere --yes
            says so. One undo reverts the whole edit.
            Taskwarrior's words work too: +tag, -tag, pri:H, due:friday, project:work, loc:Home,
            wait:, scheduled:, recur:, until:; with no value (due:, pri:, project:) they clear
            the field.
            """,
        "done": """
            usage: taskctl done ID... [--json]

            Marks tasks done (recording when) and stops started ones. A recurring task makes
            its next task: the same, due one period after this one (periods already past are
            skipped), none past its --until; the output names it.
            """,
        "reopen": """
            usage: taskctl reopen ID... [--json]

            Marks done tasks pending again. When no task given changes (all are pending
            already), it is an error (exit 1); the same holds for done and delete.
            """,
        "delete": """
            usage: taskctl delete ID...

            Deletes tasks. They keep their ids and can be brought back with 'taskctl undo'.
            """,
        "start": """
            usage: taskctl start ID... [--json]
                   taskctl stop ID... [--json]

            start marks pending tasks as being worked on (recording when: more urgent, and
            shown); stop ends that. done stops a task too.
            """,
        "stop": """
            usage: taskctl stop ID... [--json]

            Ends what taskctl start began (see taskctl help start).
            """,
        "annotate": """
            usage: taskctl annotate ID TEXT [--json]

            Adds a note, dated now, to a task; show lists a task's notes oldest first, and
            Taskwarrior's export carries them as annotations.
            """,
        "undo": """
            usage: taskctl undo

            Reverts the last change made by any taskctl command (add, edit, done, reopen,
            delete, start, stop, annotate, import, location changes), whichever process made it. Repeat to go further back.
            Only the fields that change touched are reverted; if one of them was changed since
            (by a program that does not journal), undo refuses and changes nothing.
            """,
        "locations": """
            usage: taskctl locations [--json]

            Lists locations with their pending task counts and high-priority tasks.
            """,
        "location": """
            usage: taskctl location add NAME
                   taskctl location rename OLD NEW
                   taskctl location delete NAME [--with-tasks]

            Location names are unique, compared without regard to case. Deleting a location
            leaves its tasks without one, or deletes them too with --with-tasks.
            """,
        "import": """
            usage: taskctl import FILE [--format taskctl|taskwarrior|todo.txt] [--json]

            Imports tasks from taskctl's own JSON (taskctl export), Taskwarrior's JSON
            (task export) or todo.txt; the format is detected unless given (JSON by its content,
            todo.txt by a .txt name; other files need --format) and said. Tasks whose UUID is
            already in the store are updated, and a UUID given twice is one task, the later
            record winning (counted as added, then updated). All or nothing: on any error
            nothing is imported. Fields taskctl does not model are kept, so exporting again
            loses nothing. Lines may end as on Unix, Windows (CR LF) or old Macs (CR).
            """,
        "export": """
            usage: taskctl export [--format taskctl|taskwarrior|todo.txt] [--all]

            Prints tasks (pending and done; --all adds deleted ones) in a format to import
            elsewhere or back into taskctl. The default format is taskctl's JSON, the same as
            list --json.
            """,
        "agenda": """
            usage: taskctl agenda [--weeks N] [--json]
                   taskctl agenda --month [YYYY-MM] [--json]

            Overdue tasks first (in red on a terminal), then the tasks due each day of the
            next N weeks (default 4), those weeks as a calendar of tasks due per day, and
            pending tasks by priority and location. --month shows a month (this one, or
            YYYY-MM) as a calendar with the number of pending tasks due each day.
            """,
        "stats": """
            usage: taskctl stats [--weeks N] [--json]

            Pending (overdue, waiting, started), done and deleted tasks; tasks done per week
            over the last N weeks (default 8); how old pending tasks are on average and the
            oldest; how long done tasks took from added to done; pending tasks by project,
            location and priority.
            """,
        "store": """
            usage: taskctl store info [--json]
                   taskctl store check
                   taskctl store compact

            info: the store's format, path, model version, objects per entity and size.
            check: integrity: every reference points at an existing object, inverses agree,
            unique values (location names, task UUIDs) are unique, checksums match. Exit status 2
            when a problem is found.
            compact: rewrite a binary store as a snapshot of its tasks, without the space of
            old versions (also done automatically once the changes since the last compaction
            pass 256 KiB and an eighth of the snapshot).
            """,
        "migrate": """
            usage: taskctl migrate [--dry-run]

            Migrates a store written by an older taskctl to the current model (taskctl does
            this on its own when it opens such a store). --dry-run prints the steps and the
            objects each would carry, and runs the whole migration into temporary files, with
            every check, without changing the store; objects that would fail are named.
            """,
        "completion": """
            usage: taskctl completion bash|zsh|fish

            Prints a script that completes commands, options, priorities, locations, projects,
            tags and task ids. bash: eval "$(taskctl completion bash)" in ~/.bashrc; zsh: eval
            "$(taskctl completion zsh)" in ~/.zshrc; fish: taskctl completion fish >
            ~/.config/fish/completions/taskctl.fish. Names from the store are offered as
            text, quoted; the shell never runs them.
            """,
        "install": """
            usage: taskctl install [--prefix DIR]

            Copies this taskctl to DIR/bin, its manual page to DIR/share/man/man1 and its
            completions for bash, zsh and fish under DIR/share (DIR: ~/.local). Build it
            first as a release with the standard library inside, which starts faster:
            swift build -c release --static-swift-stdlib --product taskctl && .build/release/taskctl install
            The store and the configuration are not touched.
            """,
        "uninstall": """
            usage: taskctl uninstall [--prefix DIR]

            Removes what taskctl install put under DIR (~/.local); the store and the
            configuration stay.
            """,
        "help": """
            usage: taskctl help [COMMAND | dates | man]

            Prints the overview, a command's help (the same as taskctl COMMAND --help),
            the date forms taskctl reads (help dates), or all of it as a manual page in
            roff (taskctl help man > taskctl.1; man ./taskctl.1).
            """,
        "dates": """
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
            """,
    ]

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
