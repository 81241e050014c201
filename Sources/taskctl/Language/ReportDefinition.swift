/// A Taskwarrior report: its columns (`id`, `due.relative`, ...), their labels, its sort
/// (`urgency-,due+`, `/` marks a break) and its filter, as Taskwarrior's settings
/// `report.NAME.columns`, `.labels`, `.sort`, `.filter` and `.description` define them.
/// Taskwarrior 2.6's reports are built in with its defaults (its `list` excepted: taskctl's
/// own `list` keeps that name); the settings change them or define new ones.
struct ReportDefinition: Sendable {
    var description: String
    var columns: [String]
    var labels: [String]
    var sort: String
    var filter: String

    /// The names of ``builtIn``'s reports, sorted: what dispatch needs of them, without
    /// making every report (a command that runs none made them all at its start).
    static let builtInNames = ["active", "all", "blocked", "blocking", "completed", "long", "ls", "minimal", "newest", "next",
                               "oldest", "overdue", "ready", "recurring", "unblocked", "waiting"]

    /// Taskwarrior 2.6.2's reports and their defaults (its `Context.cpp`).
    static let builtIn: [String: ReportDefinition] = [
        "long": .init(description: "All details of tasks",
                      columns: "id,start.active,entry,modified.age,depends,priority,project,tags,recur,wait.remaining,scheduled,due,until,description",
                      labels: "ID,A,Created,Mod,Deps,P,Project,Tags,Recur,Wait,Sched,Due,Until,Description",
                      sort: "modified-", filter: "status:pending -WAITING"),
        "ls": .init(description: "Few details of tasks",
                    columns: "id,start.active,depends.indicator,project,tags,recur.indicator,wait.remaining,scheduled.countdown,due.countdown,until.countdown,description.count",
                    labels: "ID,A,D,Project,Tags,R,Wait,S,Due,Until,Description",
                    sort: "start-,description+", filter: "status:pending -WAITING"),
        "minimal": .init(description: "Minimal details of tasks", columns: "id,project,tags.count,description.count",
                         labels: "ID,Project,Tags,Description", sort: "project+/,description+", filter: "status:pending"),
        "newest": .init(description: "Newest tasks",
                        columns: "id,start.age,entry,entry.age,modified.age,depends.indicator,priority,project,tags,recur.indicator,wait.remaining,scheduled.countdown,due,until.age,description",
                        labels: "ID,Active,Created,Age,Mod,D,P,Project,Tags,R,Wait,Sch,Due,Until,Description",
                        sort: "entry-", filter: "status:pending"),
        "oldest": .init(description: "Oldest tasks",
                        columns: "id,start.age,entry,entry.age,modified.age,depends.indicator,priority,project,tags,recur.indicator,wait.remaining,scheduled.countdown,due,until.age,description",
                        labels: "ID,Active,Created,Age,Mod,D,P,Project,Tags,R,Wait,Sch,Due,Until,Description",
                        sort: "entry+", filter: "status:pending"),
        "overdue": .init(description: "Overdue tasks",
                         columns: "id,start.age,entry.age,depends,priority,project,tags,recur.indicator,scheduled.countdown,due,until,description,urgency",
                         labels: "ID,Active,Age,Deps,P,Project,Tag,R,S,Due,Until,Description,Urg",
                         sort: "urgency-,due+", filter: "status:pending and +OVERDUE"),
        "active": .init(description: "Active tasks",
                        columns: "id,start,start.age,entry.age,depends.indicator,priority,project,tags,recur,wait,scheduled.remaining,due,until,description",
                        labels: "ID,Started,Active,Age,D,P,Project,Tags,Recur,W,Sch,Due,Until,Description",
                        sort: "project+,start+", filter: "status:pending and +ACTIVE"),
        "completed": .init(description: "Completed tasks",
                           columns: "id,uuid.short,entry,end,entry.age,depends,priority,project,tags,recur.indicator,due,description",
                           labels: "ID,UUID,Created,Completed,Age,Deps,P,Project,Tags,R,Due,Description",
                           sort: "end+", filter: "status:completed"),
        "recurring": .init(description: "Recurring Tasks",
                           columns: "id,start.age,entry.age,depends.indicator,priority,parent.short,project,tags,recur,scheduled.countdown,due,until.remaining,description,urgency",
                           labels: "ID,Active,Age,D,P,Parent,Project,Tags,Recur,Sch,Due,Until,Description,Urg",
                           sort: "due+,urgency-,entry+", filter: "(status:pending and +CHILD) or (status:recurring and +PARENT)"),
        "waiting": .init(description: "Waiting (hidden) tasks",
                         columns: "id,start.active,entry.age,depends.indicator,priority,project,tags,recur.indicator,wait,wait.remaining,scheduled,due,until,description",
                         labels: "ID,A,Age,D,P,Project,Tags,R,Wait,Remaining,Sched,Due,Until,Description",
                         sort: "due+,wait+,entry+", filter: "+WAITING"),
        "all": .init(description: "All tasks",
                     columns: "id,status.short,uuid.short,start.active,entry.age,end.age,depends.indicator,priority,project.parent,tags.count,recur.indicator,wait.remaining,scheduled.remaining,due,until.remaining,description",
                     labels: "ID,St,UUID,A,Age,Done,D,P,Project,Tags,R,Wait,Sch,Due,Until,Description",
                     sort: "entry-", filter: ""),
        "next": .init(description: "Most urgent tasks",
                      columns: "id,start.age,entry.age,depends,priority,project,tags,recur,scheduled.countdown,due.relative,until.remaining,description,urgency",
                      labels: "ID,Active,Age,Deps,P,Project,Tag,Recur,S,Due,Until,Description,Urg",
                      sort: "urgency-", filter: "status:pending -WAITING limit:page"),
        "ready": .init(description: "Most urgent actionable tasks",
                       columns: "id,start.age,entry.age,depends.indicator,priority,project,tags,recur.indicator,scheduled.countdown,due.countdown,until.remaining,description,urgency",
                       labels: "ID,Active,Age,D,P,Project,Tags,R,S,Due,Until,Description,Urg",
                       sort: "start-,urgency-", filter: "+READY"),
        "blocked": .init(description: "Blocked tasks", columns: "id,depends,project,priority,due,start.active,entry.age,description",
                         labels: "ID,Deps,Proj,Pri,Due,Active,Age,Description", sort: "due+,priority-,start-,project+",
                         filter: "status:pending -WAITING +BLOCKED"),
        "unblocked": .init(description: "Unblocked tasks", columns: "id,depends,project,priority,due,start.active,entry.age,description",
                           labels: "ID,Deps,Proj,Pri,Due,Active,Age,Description", sort: "due+,priority-,start-,project+",
                           filter: "status:pending -WAITING -BLOCKED"),
        "blocking": .init(description: "Blocking tasks",
                          columns: "id,uuid.short,start.active,depends,project,tags,recur,wait,scheduled.remaining,due.relative,until.remaining,description.count,urgency",
                          labels: "ID,UUID,A,Deps,Project,Tags,R,W,Sch,Due,Until,Description,Urg",
                          sort: "urgency-,due+,entry+", filter: "status:pending -WAITING +BLOCKING"),
    ]

    init(description: String, columns: String, labels: String, sort: String, filter: String) {
        self.description = description
        self.columns = columns.split(separator: ",").map { $0.trimmingBlanks() }
        self.labels = labels.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingBlanks() }
        self.sort = sort
        self.filter = filter
    }

    /// The columns a report may show, with their styles (the first is the default).
    static let styles: [String: [String]] = [
        "id": ["number"], "uuid": ["long", "short"], "description": ["combined", "desc", "oneline", "truncated", "count", "truncated_count"],
        "project": ["full", "parent", "indented"], "tags": ["list", "indicator", "count"], "priority": ["default", "indicator"],
        "status": ["long", "short"], "depends": ["list", "count", "indicator"], "recur": ["duration", "indicator"], "urgency": ["real", "integer"],
        "parent": ["long", "short"], "location": ["default"],
        "entry": dateStyles, "start": dateStyles + ["active"], "end": dateStyles, "due": dateStyles, "wait": dateStyles,
        "scheduled": dateStyles, "until": dateStyles, "modified": dateStyles,
    ]
    static let dateStyles = ["formatted", "julian", "epoch", "iso", "age", "relative", "remaining", "countdown"]

    /// The keys a report may sort by.
    static let sortKeys: Set<String> = ["urgency", "id", "description", "project", "status", "tags", "uuid", "parent", "due", "end", "entry",
                                        "start", "until", "wait", "modified", "scheduled", "depends", "recur", "priority", "location"]

    /// Checks the columns (each a known column or user-defined attribute, with a style it
    /// has), the labels (as many, or none) and the sort keys; `name` and `userAttributes`
    /// say where and what else is known.
    func check(name: String, userAttributes: Set<String>) throws {
        guard !columns.isEmpty else { throw CLIError.usage("report.\(name).columns is empty: a report needs columns (id,description,...)") }
        for column in columns {
            let parts = column.split(separator: ".", maxSplits: 1).map(String.init)
            let base = parts[0]
            if userAttributes.contains(base) {
                guard parts.count == 1 || ["default", "indicator"].contains(parts[1]) else {
                    throw CLIError.usage("report.\(name).columns: '\(column)': a user-defined attribute's column takes the styles default and indicator")
                }
                continue
            }
            guard let styles = Self.styles[base] else {
                throw CLIError.usage("report.\(name).columns: '\(column)' is not a column taskctl has (\(Self.styles.keys.sorted().joined(separator: ", ")), or a user-defined attribute)")
            }
            if parts.count == 2, !styles.contains(parts[1]), !(parts[1] == "default") {
                throw CLIError.usage("report.\(name).columns: '\(column)': \(base) takes the styles \(styles.joined(separator: ", "))")
            }
        }
        let labelCount = labels.count == 1 && labels[0].isEmpty ? 0 : labels.count
        if labelCount != 0 && labelCount != columns.count {
            throw CLIError.usage("report.\(name): \(columns.count) columns but \(labelCount) labels (give one label per column, or none)")
        }
        _ = try Self.sortKeys(sort, userAttributes: userAttributes, report: name)
    }

    /// A sort setting's keys: (field, ascending, break). `none` (or nothing): no sort.
    static func sortKeys(_ text: String, userAttributes: Set<String>, report: String) throws -> [(field: String, ascending: Bool, breaks: Bool)] {
        let trimmed = text.trimmingBlanks()
        guard !trimmed.isEmpty, trimmed != "none" else { return [] }
        return try trimmed.split(separator: ",").map { part in
            var field = part.trimmingBlanks()
            var breaks = false
            if field.hasSuffix("/") { breaks = true; field.removeLast() }
            var ascending = true
            if field.hasSuffix("-") { ascending = false; field.removeLast() } else if field.hasSuffix("+") { field.removeLast() }
            guard sortKeys.contains(field) || userAttributes.contains(field) else {
                throw CLIError.usage("report.\(report).sort: '\(field)' is not a field taskctl sorts by (\(sortKeys.sorted().joined(separator: ", ")))")
            }
            return (field, ascending, breaks)
        }
    }
}
