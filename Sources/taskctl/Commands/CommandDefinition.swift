/// One definition per command: its name, its line in `taskctl help`, its options, its help
/// text and the code that runs it. Dispatch, `help`, the manual page and completion are all
/// made from this table, and each command reads its words with the options defined here
/// (``Arguments/init(_:for:)``), so no list is kept in step with another by hand.
struct CommandDefinition {
    let name: String
    /// How `taskctl help` shows it in the list of commands (nil: named in another's line).
    let synopsis: String?
    /// Options that take a value, and switches, without their dashes.
    let valued: Set<String>
    let switches: Set<String>
    /// Whether Taskwarrior's words (`+tag`, `due:friday`) are read as options.
    let taskwarriorAttributes: Bool
    let run: ([String], App) throws -> Void
    /// The summary and help as written, or the built-in report whose they are (made when
    /// asked for: every command's start made all the reports' texts).
    private let texts: Texts

    private enum Texts {
        case written(summary: String, help: String)
        case report(String)
    }

    init(name: String, synopsis: String?, summary: String, valued: Set<String>, switches: Set<String>, taskwarriorAttributes: Bool,
         help: String, run: @escaping ([String], App) throws -> Void) {
        self.name = name
        self.synopsis = synopsis
        self.valued = valued
        self.switches = switches
        self.taskwarriorAttributes = taskwarriorAttributes
        self.run = run
        texts = .written(summary: summary, help: help)
    }

    /// Taskwarrior's report `name` (one of ``ReportDefinition/builtInNames``) as a command.
    private init(report name: String) {
        self.name = name
        synopsis = nil
        valued = []
        switches = []
        taskwarriorAttributes = false
        run = { try ReportCommand.run(name, $0, $1) }
        texts = .report(name)
    }

    /// What it does, in that list.
    var summary: String {
        switch texts {
        case .written(let summary, _): return summary
        case .report(let name): return "Taskwarrior's \(name) report: \(Self.report(name).description.lowercased())"
        }
    }

    /// `taskctl help NAME`, also the command's section of the manual page and of docs/taskctl.md.
    var help: String {
        switch texts {
        case .written(_, let help): return help
        case .report(let name):
            let report = Self.report(name)
            return """
                usage: taskctl [FILTER] \(name) [FILTER]

                Taskwarrior's \(name) report (\(report.description.lowercased())), as Taskwarrior 2.6 makes it:
                  filter   \(report.filter.isEmpty ? "(none: every task)" : report.filter)
                  sort     \(report.sort)
                  columns  \(report.columns.joined(separator: ","))
                The filter on the line is added to the report's. The settings report.\(name).columns,
                .labels, .sort, .filter and .description change it (taskctl help reports).
                """
        }
    }

    private static func report(_ name: String) -> ReportDefinition {
        ReportDefinition.builtIn[name] ?? ReportDefinition(description: "", columns: "", labels: "", sort: "", filter: "")
    }

    /// Every option as typed (`--name`), as completion offers them.
    var options: [String] { (valued.sorted() + switches.sorted()).map { "--" + $0 } }

    static func named(_ name: String) -> CommandDefinition? { all.first { $0.name == name } }

    /// The table, in the order `taskctl help` lists the commands. Made once per process: a
    /// command found itself in it twice, and each lookup made the whole table again (its
    /// option sets, every report's help), three tables per command with the command names.
    /// Read only, after it is made; taskctl reads it on its main thread.
    nonisolated(unsafe) static let all: [CommandDefinition] = table()

    private static func table() -> [CommandDefinition] {
        [
            CommandDefinition(
                name: "add", synopsis: "add TEXT", summary: "add a task and print its id",
                valued: ["priority", "due", "location", "project", "tag", "wait", "scheduled", "recur", "until", "depends"], switches: ["json"], taskwarriorAttributes: true,
                help: """
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
                      --recur PERIOD    daily, weekdays, weekly, monthly, quarterly, yearly, or 3d, 2w, 6m,
                                        1y, P1W: a recurring task (needs --due), a template and its
                                        instances, as in Taskwarrior; prints the first pending
                                        instance's id (taskctl help recurrence)
                      --until DATE      when the series ends (its instances expire then); without
                                        --recur, when the task expires (deleted, as in Taskwarrior)
                      --depends IDS     the tasks it waits for: ids, ranges (3-5) or UUIDs, with commas;
                                        it is blocked while one of them is open (taskctl help dependencies)
                    A high-priority task needs a due date.
                    Taskwarrior's words work too: taskctl add Buy milk +shopping due:tomorrow pri:H
                    (also project:, loc:, wait:, scheduled:, recur:, until:, depends:). Attributes taskctl
                    lacks (start:, end:, entry:) are refused, never stored as text; after -- every word is text.
                    """,
                run: { try TaskCommands.add($0, $1) }),
            CommandDefinition(
                name: "list", synopsis: "list", summary: "list tasks (pending by default)",
                valued: ["priority", "location", "project", "tag", "untag", "due-before", "due-after", "due-by", "project-not", "text-contains", "status", "where", "sort", "group-by", "limit"], switches: ["all", "done", "overdue", "json"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl [FILTER] list [FILTER] [--all|--done] [--priority P] [--location NAME] [--project NAME]
                                        [--tag TAG] [--overdue] [--due-before DATE] [--due-after DATE] [--where PREDICATE]
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
                    A Taskwarrior filter before or after list selects as in Taskwarrior (taskctl help
                    filters): taskctl +work or +home list, taskctl list project:home due.before:eow,
                    taskctl list "(+a or +b)" /milk/. A filter naming a status (status:completed,
                    +COMPLETED, +DELETED) lists those instead of the pending tasks; --project NAME is
                    the project and its subprojects, where project:NAME is every project starting so.
                    """,
                run: ListCommand.run),
            CommandDefinition(
                name: "show", synopsis: "show ID", summary: "show one task",
                valued: [], switches: ["json", "all", "deleted", "changes"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl show ID [--deleted] [--changes] [--json]
                           taskctl FILTER [show]

                    Shows one task: every field, its dependencies by id and the tasks waiting for it,
                    its urgency; with --changes also its changes from the store's history (its last
                    1,000 transactions), oldest first, with old and new values. Taskwarrior's info
                    (taskctl info ID, or taskctl ID alone) shows the changes. ID is the task's
                    number, its UUID or a unique UUID prefix. A deleted task is shown only with
                    --deleted (or --all); otherwise it is an error. After a filter (taskctl 3,
                    taskctl +work show), every task it selects.
                    """,
                run: TaskCommands.show),
            CommandDefinition(
                name: "count", synopsis: "FILTER count", summary: "how many tasks a filter selects (also ids, uuids, _ids, _uuids)",
                valued: [], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl [FILTER] count

                    Taskwarrior's count: the number of tasks that are not deleted and that the filter
                    selects (all such tasks without one), within the context applied.
                    """,
                run: InformationCommands.count),
            CommandDefinition(
                name: "ids", synopsis: nil, summary: "the ids a filter selects",
                valued: [], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl [FILTER] ids|uuids|_ids|_uuids

                    Taskwarrior's ids and uuids: the ids (as ranges: 1-3 5) or UUIDs (on one line)
                    of the pending tasks the filter selects; _ids and _uuids one on a line, done
                    tasks included, for scripts.
                    """,
                run: { try InformationCommands.identifiers($0, $1, command: "ids") }),
            CommandDefinition(
                name: "uuids", synopsis: nil, summary: "the UUIDs a filter selects",
                valued: [], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl [FILTER] uuids

                    See taskctl help ids.
                    """,
                run: { try InformationCommands.identifiers($0, $1, command: "uuids") }),
            CommandDefinition(
                name: "_ids", synopsis: nil, summary: "ids one on a line",
                valued: [], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl [FILTER] _ids

                    See taskctl help ids.
                    """,
                run: { try InformationCommands.identifiers($0, $1, command: "_ids") }),
            CommandDefinition(
                name: "_uuids", synopsis: nil, summary: "UUIDs one on a line",
                valued: [], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl [FILTER] _uuids

                    See taskctl help ids.
                    """,
                run: { try InformationCommands.identifiers($0, $1, command: "_uuids") }),
            CommandDefinition(
                name: "edit", synopsis: "edit ID...", summary: "change tasks (or every task --where PREDICATE matches)",
                valued: ["text", "priority", "due", "location", "project", "tag", "untag", "wait", "scheduled", "recur", "until", "depends", "where"], switches: ["no-due", "no-location", "no-project", "no-wait", "no-scheduled", "no-recur", "no-until", "json", "yes"], taskwarriorAttributes: true,
                help: """
                    usage: taskctl [FILTER] edit [ID...] [--text T] [--priority P] [--due DATE | --no-due]
                                              [--location NAME | --no-location] [--project NAME | --no-project]
                                              [--tag TAG] [--untag TAG] [--wait DATE | --no-wait]
                                              [--scheduled DATE | --no-scheduled] [--recur PERIOD | --no-recur]
                                              [--until DATE | --no-until] [--depends [-]IDS] [--json]
                           taskctl edit --where PREDICATE [changes as above] [--yes]

                    Changes tasks (those ids, or those a filter before edit selects); options not given
                    stay as they are. At least one change is needed. Prints each task's id and text
                    (the whole task with --json). --where changes every task that is not deleted and
                    that the predicate matches (as in list --where); with only --priority, --text and
                    --no-due it is one batch update in the store, no task loaded. 3 tasks or more at
                    once are confirmed first (taskctl help filters); --yes answers. One undo reverts the
                    whole edit.
                    Taskwarrior's words work too: +tag, -tag, pri:H, due:friday, project:work, loc:Home,
                    wait:, scheduled:, recur:, until:, depends:; with no value (due:, pri:, project:,
                    depends:) they clear the field. --depends 3,4 adds dependencies, --depends -3
                    removes one (taskctl help dependencies).
                    """,
                run: TaskCommands.edit),
            CommandDefinition(
                name: "modify", synopsis: "FILTER modify WORDS", summary: "change the tasks a filter selects (also append, prepend, duplicate, denotate)",
                valued: ["priority", "due", "location", "project", "tag", "untag", "wait", "scheduled", "recur", "until", "status", "depends"],
                switches: ["no-due", "no-location", "no-project", "no-wait", "no-scheduled", "no-recur", "no-until", "json", "yes"], taskwarriorAttributes: true,
                help: """
                    usage: taskctl FILTER modify [WORDS] [+tag] [-tag] [pri:H] [due:DATE] [project:NAME] ... [--yes] [--json]

                    Taskwarrior's modify: changes every task the filter before it selects (ids, a range
                    such as 1-3, +tag, project:NAME, ...; see taskctl help filters). Attribute words
                    change fields as in edit (an empty value clears one: due:); other words replace the
                    text; /from/to/ replaces the first 'from' in the text, /from/to/g every one;
                    status:pending, status:completed and status:deleted set the status; a date may
                    count from the task's own (due:due+1d, wait:due-2d); depends:3,4 adds dependencies,
                    depends:-3 removes one, depends: removes all. 3 tasks or more (the setting bulk)
                    are confirmed first.
                    Example: taskctl 4 modify pri:H due:fri Call the garage
                    """,
                run: TaskCommands.modify),
            CommandDefinition(
                name: "append", synopsis: nil, summary: "add words to the end of tasks' text",
                valued: [], switches: ["json", "yes"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl FILTER append WORDS [--json]

                    Adds the words to the end of the text of every task the filter selects.
                    """,
                run: { try TaskCommands.extend($0, $1, prepend: false) }),
            CommandDefinition(
                name: "prepend", synopsis: nil, summary: "add words to the start of tasks' text",
                valued: [], switches: ["json", "yes"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl FILTER prepend WORDS [--json]

                    Adds the words to the start of the text of every task the filter selects.
                    """,
                run: { try TaskCommands.extend($0, $1, prepend: true) }),
            CommandDefinition(
                name: "duplicate", synopsis: nil, summary: "add a copy of each task a filter selects",
                valued: ["priority", "due", "location", "project", "tag", "untag", "wait", "scheduled", "recur", "until", "depends"],
                switches: ["no-due", "no-location", "no-project", "no-wait", "no-scheduled", "no-recur", "no-until", "json", "yes"], taskwarriorAttributes: true,
                help: """
                    usage: taskctl FILTER duplicate [WORDS] [pri:H] [due:DATE] [+tag] ... [--json]

                    Taskwarrior's duplicate: adds a pending copy of each task the filter selects (its
                    text, priority, dates, location, project, tags and annotations; not when it was
                    started or ended), changed as modify's attribute words say; other words annotate
                    the copy, as in Taskwarrior 2.6.
                    """,
                run: TaskCommands.duplicate),
            CommandDefinition(
                name: "denotate", synopsis: nil, summary: "remove an annotation",
                valued: [], switches: ["yes"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl FILTER denotate [TEXT]

                    Taskwarrior's denotate: removes from each task the filter selects the annotation
                    whose text is TEXT, else the first that contains it (the oldest, with no TEXT).
                    """,
                run: TaskCommands.denotate),
            CommandDefinition(
                name: "done", synopsis: "done ID...", summary: "mark tasks done",
                valued: [], switches: ["json", "yes"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl done ID... [--yes] [--json]
                           taskctl FILTER done

                    Marks tasks done (recording when) and stops started ones. Done, an instance of a
                    recurring task is marked so in its template, and the output names the series'
                    next pending instance; a template itself is not done (its instances are), as in
                    Taskwarrior (taskctl help recurrence). 3 tasks or more at once are confirmed
                    first, as in Taskwarrior (taskctl help filters); --yes answers.
                    """,
                run: { try TaskCommands.setStatus($0, $1, command: "done", to: "done") }),
            CommandDefinition(
                name: "reopen", synopsis: "reopen ID...", summary: "mark done tasks pending again",
                valued: [], switches: ["json", "yes"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl reopen ID... [--yes] [--json]
                           taskctl FILTER reopen

                    Marks done tasks pending again. When no task given changes (all are pending
                    already), it is an error (exit 1); the same holds for done and delete.
                    """,
                run: { try TaskCommands.setStatus($0, $1, command: "reopen", to: "pending") }),
            CommandDefinition(
                name: "delete", synopsis: "delete ID...", summary: "delete tasks",
                valued: [], switches: ["json", "yes"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl delete ID... [--yes] [--json]
                           taskctl FILTER delete

                    Deletes tasks. They keep their ids and can be brought back with 'taskctl undo'.
                    3 tasks or more at once are confirmed first (taskctl help filters); --yes answers.
                    """,
                run: { try TaskCommands.setStatus($0, $1, command: "delete", to: "deleted") }),
            CommandDefinition(
                name: "start", synopsis: "start ID...", summary: "mark tasks as being worked on (stop ID... ends that)",
                valued: [], switches: ["json", "yes"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl start ID... [--yes] [--json]   (or taskctl FILTER start)
                           taskctl stop ID... [--yes] [--json]    (or taskctl FILTER stop)

                    start marks pending tasks as being worked on (recording when: more urgent, and
                    shown); stop ends that. done stops a task too. 3 tasks or more at once are
                    confirmed first (taskctl help filters); --yes answers.
                    """,
                run: { try TaskCommands.setStarted($0, $1, start: true) }),
            CommandDefinition(
                name: "stop", synopsis: nil, summary: "end work on tasks started with start",
                valued: [], switches: ["json", "yes"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl stop ID... [--yes] [--json]   (or taskctl FILTER stop)

                    Ends what taskctl start began (see taskctl help start).
                    """,
                run: { try TaskCommands.setStarted($0, $1, start: false) }),
            CommandDefinition(
                name: "annotate", synopsis: "annotate ID TEXT", summary: "add a dated note to a task",
                valued: [], switches: ["json", "yes"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl annotate ID TEXT [--json]
                           taskctl FILTER annotate TEXT [--yes]

                    Adds a note, dated now, to a task; show lists a task's notes oldest first, and
                    Taskwarrior's export carries them as annotations.
                    """,
                run: TaskCommands.annotate),
            CommandDefinition(
                name: "undo", synopsis: "undo", summary: "revert the last change made by any taskctl command",
                valued: [], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl undo

                    Reverts the last change made by any taskctl command (add, edit, done, reopen,
                    delete, start, stop, annotate, import, location changes), whichever process made it,
                    from the store's history (see taskctl log). Repeat to go further back.
                    Only the fields that change touched are reverted; if one of them was changed since
                    (by another program), undo refuses, names the fields and changes nothing.
                    """,
                run: UndoCommand.run),
            CommandDefinition(
                name: "log", synopsis: "log", summary: "list recent changes: when, which command, which fields, old -> new",
                valued: ["limit"], switches: ["json"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl log [--limit N] [--json]
                           taskctl log TEXT [pri:H] [project:NAME] [+tag] ...

                    Lists the store's last changes (10, or N), oldest first: the change's number,
                    when it was saved, the command that made it (or the program, when not taskctl),
                    and per task (or location, tag, project, annotation) the fields it changed,
                    old -> new. 'undo of #N' marks what an undo reverted. The store keeps at least
                    its last 1,000 changes.
                    With words, Taskwarrior's log: adds a task that is done already (as add takes
                    its words), so taskctl log Bought milk +shop records it.
                    """,
                run: HistoryCommand.run),
            CommandDefinition(
                name: "locations", synopsis: "locations", summary: "list locations with task counts and high-priority tasks",
                valued: [], switches: ["json"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl locations [--json]

                    Lists locations with their pending task counts and high-priority tasks.
                    """,
                run: LocationCommands.list),
            CommandDefinition(
                name: "location", synopsis: "location", summary: "add, rename or delete a location",
                valued: [], switches: ["with-tasks"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl location add NAME
                           taskctl location rename OLD NEW
                           taskctl location delete NAME [--with-tasks]

                    Location names are unique, compared without regard to case. Deleting a location
                    leaves its tasks without one, or deletes them too with --with-tasks.
                    """,
                run: LocationCommands.run),
            CommandDefinition(
                name: "import", synopsis: "import FILE", summary: "import taskctl JSON, Taskwarrior JSON or todo.txt",
                valued: ["format"], switches: ["json"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl import FILE|- [--format taskctl|taskwarrior|todo.txt] [--json]

                    Imports tasks from taskctl's own JSON (taskctl export), Taskwarrior's JSON
                    (task export: an array, one object, or one object a line as json.array=off
                    writes) or todo.txt, from FILE or (-) the standard input; the format is detected
                    unless given (JSON by its content, todo.txt by a .txt name; other files need
                    --format) and said. Tasks whose UUID is
                    already in the store are updated, and a UUID given twice is one task, the later
                    record winning (counted as added, then updated). All or nothing: on any error
                    nothing is imported. Fields taskctl does not model are kept, so exporting again
                    loses nothing. Lines may end as on Unix, Windows (CR LF) or old Macs (CR).
                    """,
                run: ImportCommand.run),
            CommandDefinition(
                name: "export", synopsis: "export", summary: "export tasks (taskctl JSON, Taskwarrior JSON or todo.txt)",
                valued: ["format"], switches: ["all"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl [FILTER] export [FILTER] [--format taskctl|taskwarrior|todo.txt] [--all]

                    Prints tasks (pending and done; --all adds deleted ones), or those a filter
                    selects (taskctl help filters), in a format to import elsewhere or back into taskctl. The default format is taskctl's JSON, the same as
                    list --json.
                    """,
                run: ExportCommand.run),
            CommandDefinition(
                name: "agenda", synopsis: "agenda", summary: "the next weeks at a glance, or a month (--month)",
                valued: ["weeks"], switches: ["json", "month"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl agenda [--weeks N] [--json]
                           taskctl agenda --month [YYYY-MM] [--json]

                    Overdue tasks first (in red on a terminal), then the tasks due each day of the
                    next N weeks (default 4), those weeks as a calendar of tasks due per day, and
                    pending tasks by priority and location. --month shows a month (this one, or
                    YYYY-MM) as a calendar with the number of pending tasks due each day.
                    """,
                run: AgendaCommand.run),
            CommandDefinition(
                name: "stats", synopsis: "stats", summary: "counts, tasks done per week, ages, by project and location",
                valued: ["weeks"], switches: ["json"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl stats [--weeks N] [--json]

                    Pending (overdue, waiting, started), done and deleted tasks; tasks done per week
                    over the last N weeks (default 8); how old pending tasks are on average and the
                    oldest; how long done tasks took from added to done; pending tasks by project,
                    location and priority.
                    """,
                run: StatsCommand.run),
            CommandDefinition(
                name: "context", synopsis: "context", summary: "define, apply and list contexts (a filter every command adds)",
                valued: [], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl context define NAME FILTER
                           taskctl context NAME | none | list | show
                           taskctl context delete NAME

                    Taskwarrior's contexts. define keeps the filter as the context's read filter and,
                    when it has no 'or', no -tag and no modifier but is, as its write filter too
                    (context.NAME.read and context.NAME.write in the settings file). context NAME
                    applies it: every list and export, and every command given a filter (not ids),
                    selects within it; add gives new tasks its write filter's attributes
                    (taskctl context define work +work project:acme, then taskctl add Call Bob adds
                    +work project:acme). context none stops applying it; list shows every context,
                    show the one applied. Commands given ids are not limited by it.
                    """,
                run: ConfigCommands.context),
            CommandDefinition(
                name: "config", synopsis: "config [NAME [VALUE]]", summary: "read or change a setting in the settings file",
                valued: ["unset"], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl config                 every setting in the file
                           taskctl config NAME            one setting's value
                           taskctl config NAME VALUE      sets it (checked as taskctl reads it)
                           taskctl config --unset NAME    removes it

                    Reads and changes taskctl's settings file (~/.config/taskctl/config, or the
                    rc:FILE given); comments and other lines stay as they are. Secrets
                    (sync.encryption_secret, sync.aws.secret_access_key) are never printed. Unlike
                    Taskwarrior's, config NAME without a value reads the setting; --unset removes it.
                    """,
                run: ConfigCommands.config),
            CommandDefinition(
                name: "sync", synopsis: "sync", summary: "sync through a TaskChampion server, S3 bucket or git, as Taskwarrior 3 does",
                valued: [], switches: ["status"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl sync [--status]

                    Syncs the store's tasks with a TaskChampion sync server (the one Taskwarrior 3
                    uses), an S3 bucket or a git repository: receives what other replicas sent since the last
                    sync, then sends this store's changes, end-to-end encrypted. The config file
                    names them with Taskwarrior 3's settings:
                      sync.server.url = https://sync.example.com
                      sync.server.client_id = UUID     (the same on every replica of one task list)
                      sync.encryption_secret = SECRET  (the same on every replica; never printed)
                    or, for git (TaskChampion's git layout, Taskwarrior 3.5):
                      sync.git.local_path = DIR        (this replica's clone, made when missing)
                      sync.git.remote = URL            (none: DIR is the only copy)
                      sync.git.branch = main
                    or, for an S3 bucket (TaskChampion's bucket layout, Taskwarrior 3's sync.aws.*):
                      sync.aws.bucket = NAME           (used for nothing else)
                      sync.aws.region = us-east-1
                      sync.aws.access_key_id = ID      (or sync.aws.profile = NAME of ~/.aws/credentials,
                      sync.aws.secret_access_key = KEY  or sync.aws.default_credentials = true)
                      sync.aws.endpoint_url = URL      (another S3 service: MinIO, R2, SeaweedFS, ...)
                      sync.aws.force_path_style = true (the bucket in the URL's path)
                    sync.timeout = 300 bounds each request to a server or bucket (seconds, answer
                    included); an answer over 1 GiB is refused unread.
                    Two replicas that changed different fields of a task keep both; the same field
                    takes the later change. The first sync with a server sends every task. The key
                    is derived from the secret once (0.4 s) and kept in ~/.cache/taskctl/sync-key
                    (owner-only).
                    --status: the server, its version this store is at, the last sync and the
                    changes not sent yet, without contacting the server.
                    Exit status 3 when the server cannot be reached or its data does not open (a wrong
                    secret); nothing local is lost, and the next sync sends what this one did not.
                    """,
                run: SyncCommand.run),
            CommandDefinition(
                name: "store", synopsis: "store", summary: "store info | check | compact | repair",
                valued: [], switches: ["json"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl store info [--json]
                           taskctl store check
                           taskctl store compact
                           taskctl store repair

                    info: the store's format, path, model version, objects per entity and size.
                    check: integrity: every reference points at an existing object, inverses agree,
                    unique values (location names, task UUIDs) are unique, checksums match. Exit status 2
                    when a problem is found.
                    compact: rewrite a binary store as a snapshot of its tasks, without the space of
                    old versions (also done automatically once the changes since the last compaction
                    pass 256 KiB and an eighth of the snapshot).
                    repair: drop the history up to its last transaction that does not decode
                    (check names it); the tasks stay as they are, undo reaches back to after it.
                    """,
                run: StoreCommands.run),
            CommandDefinition(
                name: "migrate", synopsis: "migrate", summary: "migrate an older store (--dry-run shows the plan)",
                valued: [], switches: ["dry-run"], taskwarriorAttributes: false,
                help: """
                    usage: taskctl migrate [--dry-run]

                    Migrates a store written by an older taskctl to the current model (taskctl does
                    this on its own when it opens such a store). --dry-run prints the steps and the
                    objects each would carry, and runs the whole migration into temporary files, with
                    every check, without changing the store; objects that would fail are named.
                    """,
                run: StoreCommands.migrate),
            CommandDefinition(
                name: "completion", synopsis: "completion SHELL", summary: "a completion script for bash, zsh or fish",
                valued: [], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl completion bash|zsh|fish

                    Prints a script that completes commands, options, priorities, locations, projects,
                    tags and task ids. bash: eval "$(taskctl completion bash)" in ~/.bashrc; zsh: eval
                    "$(taskctl completion zsh)" in ~/.zshrc; fish: taskctl completion fish >
                    ~/.config/fish/completions/taskctl.fish. Names from the store are offered as
                    text, quoted; the shell never runs them.
                    """,
                run: CompletionCommand.run),
            CommandDefinition(
                name: "install", synopsis: "install", summary: "put taskctl, its manual and completions under ~/.local (uninstall)",
                valued: ["prefix"], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl install [--prefix DIR]

                    Copies this taskctl and its sync helper (taskctl-http, from beside it) to DIR/bin,
                    its manual page to DIR/share/man/man1 and its completions for bash, zsh and fish
                    under DIR/share (DIR: ~/.local). Build them first as releases with the standard
                    library inside (taskctl a static executable, which starts fastest):
                    swift build -c release --static-swift-stdlib --product taskctl-http
                    swift build -c release -Xswiftc -static-executable --product taskctl \\
                      -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors &&
                      .build/release/taskctl install
                    (taskctl-http links libcurl, for HTTPS: on Debian and Ubuntu its build needs
                    libcurl4-openssl-dev. Without it, install copies the rest and says sync will not work.)
                    The store and the configuration are not touched.
                    """,
                run: InstallCommand.install),
            CommandDefinition(
                name: "uninstall", synopsis: nil, summary: "remove what install put under ~/.local",
                valued: ["prefix"], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl uninstall [--prefix DIR]

                    Removes what taskctl install put under DIR (~/.local); the store and the
                    configuration stay.
                    """,
                run: InstallCommand.uninstall),
        ] + information + reports
    }

    /// Taskwarrior's information commands (``TaskwarriorInformation``).
    static var information: [CommandDefinition] {
        func filtered(_ name: String, _ summary: String, _ text: String, _ run: @escaping ([String], App) throws -> Void) -> CommandDefinition {
            CommandDefinition(name: name, synopsis: nil, summary: summary, valued: [], switches: [], taskwarriorAttributes: false,
                              help: "usage: taskctl [FILTER] \(name) [FILTER]\n\n" + text, run: run)
        }
        return [
            filtered("projects", "the projects of open tasks, with counts", """
                Taskwarrior's projects: the projects of the open tasks (pending, waiting, recurring
                templates) the filter selects, each under its parent (home.garden under home), with
                how many tasks each has, its subprojects' included; (none) counts those without one.
                """, TaskwarriorInformation.projects),
            filtered("_projects", "project names, one a line", """
                The project names of the open tasks the filter selects, one a line (for scripts and
                completion).
                """, TaskwarriorInformation.projectNames),
            filtered("tags", "the tags of open tasks, with counts", """
                Taskwarrior's tags: each tag of the open tasks the filter selects and how many of them
                have it.
                """, TaskwarriorInformation.tags),
            filtered("summary", "per project: remaining, average age, % complete", """
                Taskwarrior's summary: for each project of a pending task (and its parents), the tasks
                remaining, the average age of its tasks (of a done one, when it was done), the share
                done, and a bar of it. The filter selects among every task.
                """, TaskwarriorInformation.summary),
            filtered("history.monthly", "tasks added, completed and deleted per month", """
                Taskwarrior's history.monthly: per month with any, the tasks added (templates aside),
                completed and deleted then, and the net change; then the averages.
                """, { try TaskwarriorInformation.history($0, $1, annual: false) }),
            filtered("history.annual", "tasks added, completed and deleted per year", """
                Taskwarrior's history.annual: as history.monthly, per year.
                """, { try TaskwarriorInformation.history($0, $1, annual: true) }),
            filtered("timesheet", "tasks completed and started in the last four weeks", """
                Taskwarrior's timesheet: the tasks completed or started in the last four weeks (or those
                the filter selects), by when, week by week (weeks from Sunday, as Taskwarrior counts
                them by default), with their project, due date and text; then how many of each.
                """, TaskwarriorInformation.timesheet),
            CommandDefinition(
                name: "_get", synopsis: nil, summary: "values of DOM references (12.description, rc.dateformat)",
                valued: [], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl _get REFERENCE...

                    Taskwarrior's DOM references, their values on one line: ID.ATTRIBUTE or UUID.ATTRIBUTE
                    (description, status, project, priority, due, entry, end, start, wait, scheduled,
                    until, modified, tags, tags.NAME, depends, recur, urgency, uuid, id, location, a
                    user-defined attribute), ID.annotations.N.description, .entry, ID.annotations.count,
                    and rc.NAME (a setting). Dates are local ISO 8601; a field the task lacks is empty.
                    """,
                run: TaskwarriorInformation.get),
            CommandDefinition(
                name: "calc", synopsis: nil, summary: "evaluate an expression of numbers, dates and durations",
                valued: [], switches: [], taskwarriorAttributes: false,
                help: """
                    usage: taskctl calc EXPRESSION

                    Taskwarrior's calculator: + - * / and parentheses over numbers (whole numbers divide
                    to a whole number), dates (now, eom, tomorrow, 2026-12-01: a day is its first second,
                    as in filters) and durations (3d, 1w, P1D): taskctl calc now+3d,
                    taskctl calc 2026-12-01 - 2026-11-25 (P6D), taskctl calc '(1+2)*3'.
                    """,
                run: Calculator.run),
        ]
    }

    /// Taskwarrior's reports (``ReportDefinition/builtInNames``), one command each.
    static var reports: [CommandDefinition] { ReportDefinition.builtInNames.map { CommandDefinition(report: $0) } }
}
