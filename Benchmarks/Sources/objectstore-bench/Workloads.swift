import Foundation
import GRDB
import ObjectStore
import ObjectStoreModel

/// The same data for every system: tasks with text, priority, due date (none for one in
/// seven) and a to-one location among 50.
struct TaskData {
    var title: String
    var priority: Int64
    var due: Date?
    var location: Int
    var uuid: UUID

    static let base = Date(timeIntervalSince1970: 1_795_348_800)
    /// Fetches ask for priority >= 2 AND due before this.
    static let cutoff = base.addingTimeInterval(45 * 86_400)

    static func make(_ n: Int) -> [TaskData] {
        var result: [TaskData] = []
        result.reserveCapacity(n)
        for i in 0..<n {
            let offset: Double = Double(i % 90) * 86_400 + Double(i % 1_000)
            let due: Date? = i % 7 == 0 ? nil : base.addingTimeInterval(offset)
            result.append(TaskData(title: "Task number \(i) with some words", priority: Int64(i % 4), due: due, location: i % 50, uuid: UUID()))
        }
        return result
    }
}

// MARK: ObjectStore

enum OS {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func models() throws -> ModelDirectory { try ModelDirectory(url: repository.appendingPathComponent("Models/Tasks")) }

    static let predicate: ObjectPredicate = {
        do {
            return try ObjectPredicate(format: "priority >= 2 AND dueDate < %@", .date(TaskData.cutoff))
        } catch {
            preconditionFailure("\(error)")
        }
    }()

    /// Inserts the data with the given model version and saves once.
    static func build(_ url: URL, _ data: [TaskData], version: String? = nil, history: HistoryRetention? = nil) throws {
        let directory = try models()
        let model = try directory.model(version: version ?? directory.currentVersionName)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url, history: history)
        let context = ManagedObjectContext(coordinator: coordinator)
        context.undoManager = nil
        try insert(data, into: context, v1: version == "v1")
        try context.save()
    }

    static func insert(_ data: [TaskData], into context: ManagedObjectContext, v1: Bool = false) throws {
        var locations: [ManagedObject] = []
        for i in 0..<50 {
            let location = try context.insertObject(entityName: "Location")
            try location.setValue(.string("Location \(i)"), forKey: "name")
            locations.append(location)
        }
        for item in data {
            let task = try context.insertObject(entityName: "Task")
            try task.setValue(.string(item.title), forKey: v1 ? "text" : "title")
            try task.setValue(.integer(item.priority), forKey: "priority")
            if let due = item.due { try task.setValue(.date(due), forKey: "dueDate") }
            if !v1 { try task.setValue(.uuid(item.uuid), forKey: "uuid") }
            try task.setObject(locations[item.location], forKey: "location")
        }
    }

    /// The current model with one more schema index (`indexes` is outside the version hash,
    /// so stores of either model open with the other).
    static func currentModel(adding index: (name: String, property: String)) throws -> ManagedObjectModel {
        let directory = try models()
        let text = try String(contentsOf: repository.appendingPathComponent("Models/Tasks/\(directory.currentVersionName).json"), encoding: .utf8)
        let shipped = #"{ "name": "byDueDate", "properties": ["dueDate"] }"#
        guard text.contains(shipped) else { throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "the current model's indexes moved"]) }
        return try ManagedObjectModel(schema: text.replacingOccurrences(
            of: shipped, with: #"{ "name": "byDueDate", "properties": ["dueDate"] }, { "name": "\#(index.name)", "properties": ["\#(index.property)"] }"#))
    }

    /// A store of the data with a model, saved once (no undo); compacted unless asked not to.
    static func build(_ url: URL, _ data: [TaskData], model: ManagedObjectModel, compacted: Bool = true) throws -> PersistentStoreCoordinator {
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        context.undoManager = nil
        try insert(data, into: context)
        try context.save()
        if compacted { try coordinator.compactStore() }
        return coordinator
    }

    static func open(_ url: URL, durability: StoreDurability = .full, history: HistoryRetention? = nil) throws -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: try models().currentModel(), storeURL: url, durability: durability, history: history))
        context.undoManager = nil
        return context
    }
}

// MARK: GRDB

struct GTask: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "task"
    var id: Int64?
    var title: String
    var priority: Int64
    var dueDate: Date?
    var locationId: Int64
    var uuid: String
    var status: String
}

enum SQL {
    /// SQLite's two journals as GRDB opens them: `DatabaseQueue` keeps SQLite's default
    /// rollback ("delete") journal; `DatabasePool` switches the file to WAL.
    enum Journal: String, CaseIterable {
        case delete, wal
        var system: String { self == .wal ? "GRDB WAL" : "GRDB delete journal" }
    }

    static func open(_ url: URL, _ journal: Journal) throws -> any DatabaseWriter {
        switch journal {
        case .delete: return try DatabaseQueue(path: url.path)
        case .wal: return try DatabasePool(path: url.path)
        }
    }

    static func create(_ url: URL, _ journal: Journal = .delete) throws -> any DatabaseWriter {
        let queue = try open(url, journal)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE location (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
                CREATE TABLE task (id INTEGER PRIMARY KEY, title TEXT NOT NULL, priority INTEGER NOT NULL, dueDate DATETIME,
                                   locationId INTEGER REFERENCES location(id) ON DELETE SET NULL, uuid TEXT NOT NULL, status TEXT NOT NULL);
                CREATE INDEX task_priority_due ON task(priority, dueDate);
                CREATE INDEX task_due ON task(dueDate);
                CREATE INDEX task_location ON task(locationId);
                """)
            for i in 0..<50 { try db.execute(sql: "INSERT INTO location (id, name) VALUES (?, ?)", arguments: [i + 1, "Location \(i)"]) }
        }
        return queue
    }

    static func insertRecords(_ queue: any DatabaseWriter, _ data: [TaskData]) throws {
        try queue.write { db in
            for item in data {
                try GTask(id: nil, title: item.title, priority: item.priority, dueDate: item.due, locationId: Int64(item.location + 1),
                          uuid: item.uuid.uuidString, status: "pending").insert(db)
            }
        }
    }

    static func insertPrepared(_ queue: any DatabaseWriter, _ data: [TaskData]) throws {
        try queue.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO task (title, priority, dueDate, locationId, uuid, status) VALUES (?, ?, ?, ?, ?, 'pending')")
            for item in data {
                try statement.execute(arguments: [item.title, item.priority, item.due, item.location + 1, item.uuid.uuidString])
            }
        }
    }
}

// MARK: The workloads

struct Workloads {
    let options: Options
    var samples: [Sample] = []
    var notes: [String] = []

    mutating func record(_ workload: String, _ size: Int, _ system: String, _ seconds: [Double]) {
        samples.append(Sample(workload: workload, size: size, system: system, seconds: seconds))
        FileHandle.standardError.write(Data("  \(workload) n=\(size) \(system): \(format(Sample(workload: "", size: 0, system: "", seconds: seconds).median))\n".utf8))
    }

    mutating func runAll() throws {
        for n in options.sizes {
            let data = TaskData.make(n)
            if options.wants("open") { try open(n, data) }
            if options.wants("insert") { try insert(n, data) }
            if options.wants("fetch") { try fetch(n, data) }
            if options.wants("delete") { try delete(n, data) }
            if options.wants("count") { try count(n, data) }
            if options.wants("fault") { try fault(n, data) }
            if options.wants("migrate") { try migrate(n, data) }
            if options.wants("memory") { try memory(n, data) }
            if options.wants("evaluate") { try evaluate(n, data) }
            if options.wants("select") { try select(n, data) }
            if options.wants("group") { try group(n, data) }
            if options.wants("top") { try top(n, data) }
            if options.wants("lookup") { try lookup(n, data) }
            if options.wants("place") { try place(n, data) }
            if options.wants("batch") { try batch(n, data) }
            if options.wants("reach") { try reach(n) }
        }
        if options.wants("edit") { try edit(options.editSizes ?? options.sizes) }
    }

    /// 1. Insert N objects and save.
    mutating func insert(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var k = 0
        func fresh(_ ext: String) -> URL { k += 1; return dir.appendingPathComponent("s\(k).\(ext)") }
        record("1 insert+save", n, "ObjectStore", try measure(options.runs, setup: { fresh("store") }) { try OS.build($0, data) })
        // With persistent history: the same save recording its transaction.
        record("1 insert+save", n, "ObjectStore history", try measure(options.runs, setup: { fresh("store") }) { try OS.build($0, data, history: HistoryRetention(transactions: 1_000)) })
        for journal in SQL.Journal.allCases {
            record("1 insert+save", n, "\(journal.system) records", try measure(options.runs, setup: { try SQL.create(fresh("sqlite"), journal) }) { try SQL.insertRecords($0, data) })
            record("1 insert+save", n, "\(journal.system) prepared", try measure(options.runs, setup: { try SQL.create(fresh("sqlite"), journal) }) { try SQL.insertPrepared($0, data) })
        }
    }

    /// 0. Cold open and read one object by its key: what every taskctl command pays first.
    /// The model directory is read at each open; its schema is parsed at the first open of a
    /// process ("model parsed": every open parses it, as each taskctl command does) and kept
    /// for later ones (`ModelDirectory` keeps the models it made).
    mutating func open(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = dir.appendingPathComponent("t.store")
        try OS.build(store, data)
        var key: Int64 = 0
        var titles = 0
        let directory = try OS.models()
        let schema = try String(contentsOf: OS.repository.appendingPathComponent("Models/Tasks/\(directory.currentVersionName).json"), encoding: .utf8)
        record("0 open+read one", n, "ObjectStore", try measure(options.runs, setup: { () }) {
            key = key * 7 % Int64(n) + 1
            let context = try OS.open(store)
            let task = try context.existingObject(with: ObjectID(entityName: "Task", storeIdentifier: context.coordinator.storeIdentifier, key: .permanent(key)))
            if task["title"] != .null { titles += 1 }
        })
        record("0 open+read one", n, "ObjectStore, model parsed", try measure(options.runs, setup: { () }) {
            key = key * 7 % Int64(n) + 1
            let model = try ManagedObjectModel(schema: schema, versionName: directory.currentVersionName)
            let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: store))
            context.undoManager = nil
            let task = try context.existingObject(with: ObjectID(entityName: "Task", storeIdentifier: context.coordinator.storeIdentifier, key: .permanent(key)))
            if task["title"] != .null { titles += 1 }
        })
        for journal in SQL.Journal.allCases {
            let sqlite = dir.appendingPathComponent("t-\(journal.rawValue).sqlite")
            try SQL.insertPrepared(try SQL.create(sqlite, journal), data)
            record("0 open+read one", n, journal.system, try measure(options.runs, setup: { () }) {
                key = key * 7 % Int64(n) + 1
                let queue = try SQL.open(sqlite, journal)
                if try queue.read({ db in try GTask.fetchOne(db, key: key) }) != nil { titles += 1 }
            })
        }
        if titles != 4 * (options.runs + 1) { notes.append("open n=\(n): \(titles) reads found their row") }
    }

    /// 2. Cold open, fetch with a predicate and a sort, touch every result's attributes.
    mutating func fetch(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = dir.appendingPathComponent("t.store")
        try OS.build(store, data)
        var found = 0
        record("2 open+fetch+sort", n, "ObjectStore", try measure(options.runs, setup: { () }) {
            let context = try OS.open(store)
            let tasks = try context.fetch(FetchRequest(entityName: "Task", predicate: OS.predicate, sortDescriptors: [SortKey("dueDate")]))
            var sum: Int64 = 0
            for task in tasks {
                if case .integer(let p) = task["priority"] { sum += p }
                _ = task["title"]
                _ = task["dueDate"]
            }
            found = tasks.count + Int(sum % 1)
        })
        for journal in SQL.Journal.allCases {
            let sqlite = dir.appendingPathComponent("t-\(journal.rawValue).sqlite")
            try SQL.insertPrepared(try SQL.create(sqlite, journal), data)
            var sqlFound = 0
            record("2 open+fetch+sort", n, journal.system, try measure(options.runs, setup: { () }) {
                let queue = try SQL.open(sqlite, journal)
                let tasks = try queue.read { db in
                    try GTask.fetchAll(db, sql: "SELECT * FROM task WHERE priority >= 2 AND dueDate < ? ORDER BY dueDate", arguments: [TaskData.cutoff])
                }
                sqlFound = tasks.count
            })
            if found != sqlFound { notes.append("fetch n=\(n): ObjectStore found \(found), \(journal.system) \(sqlFound)") }
        }
    }

    /// 10. A selective query on an indexed attribute (one day of due dates, about 1% of the
    /// tasks; Task declares the index byDueDate, SQLite has task_due): a cold open, fetch,
    /// sort and read of the results; and a count with the store open.
    mutating func select(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = dir.appendingPathComponent("t.store")
        try OS.build(store, data)
        let day = TaskData.base.addingTimeInterval(30 * 86_400), next = day.addingTimeInterval(86_400)
        let predicate = try ObjectPredicate(format: "dueDate >= %@ AND dueDate < %@", .date(day), .date(next))
        let sql = "FROM task WHERE dueDate >= ? AND dueDate < ?"
        var found = 0, counted = 0
        record("10 open+select+sort", n, "ObjectStore", try measure(options.runs, setup: { () }) {
            let context = try OS.open(store)
            let tasks = try context.fetch(FetchRequest(entityName: "Task", predicate: predicate, sortDescriptors: [SortKey("dueDate")]))
            for task in tasks {
                _ = task["title"]
                _ = task["priority"]
            }
            found = tasks.count
        })
        let open = try OS.open(store)
        record("10 count selected", n, "ObjectStore", try measure(options.runs, setup: { () }) {
            counted = try open.count(for: FetchRequest(entityName: "Task", predicate: predicate))
        })
        for journal in SQL.Journal.allCases {
            let sqlite = dir.appendingPathComponent("t-\(journal.rawValue).sqlite")
            let queue = try SQL.create(sqlite, journal)
            try SQL.insertPrepared(queue, data)
            var sqlFound = 0, sqlCounted = 0
            record("10 open+select+sort", n, journal.system, try measure(options.runs, setup: { () }) {
                let fresh = try SQL.open(sqlite, journal)
                sqlFound = try fresh.read { db in try GTask.fetchAll(db, sql: "SELECT * \(sql) ORDER BY dueDate", arguments: [day, next]) }.count
            })
            record("10 count selected", n, journal.system, try measure(options.runs, setup: { () }) {
                sqlCounted = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) \(sql)", arguments: [day, next]) ?? 0 }
            })
            if found != sqlFound || counted != sqlCounted || found != counted {
                notes.append("select n=\(n): ObjectStore \(found)/\(counted), \(journal.system) \(sqlFound)/\(sqlCounted)")
            }
        }
    }

    /// 12. The ten high-priority tasks due first (about 37% of the tasks match; no index
    /// narrows them): a cold open, a fetch sorted by due date with a limit of 10, and a
    /// read of each result's title.
    mutating func top(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = dir.appendingPathComponent("t.store")
        try OS.build(store, data)
        var request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "priority >= 2 AND dueDate != nil"),
                                   sortDescriptors: [SortKey("dueDate")])
        request.fetchLimit = 10
        var dates: [Date] = []
        record("12 open+first 10 by due date", n, "ObjectStore", try measure(options.runs, setup: { () }) {
            let context = try OS.open(store)
            let tasks = try context.fetch(request)
            for task in tasks { _ = task["title"] }
            dates = tasks.compactMap { task -> Date? in
                if case .date(let date) = task["dueDate"] { return date }
                return nil
            }
        })
        for journal in SQL.Journal.allCases {
            let sqlite = dir.appendingPathComponent("t-\(journal.rawValue).sqlite")
            let queue = try SQL.create(sqlite, journal)
            try SQL.insertPrepared(queue, data)
            var sqlDates: [Date] = []
            record("12 open+first 10 by due date", n, journal.system, try measure(options.runs, setup: { () }) {
                let fresh = try SQL.open(sqlite, journal)
                sqlDates = try fresh.read { db in
                    try GTask.fetchAll(db, sql: "SELECT * FROM task WHERE priority >= 2 AND dueDate IS NOT NULL ORDER BY dueDate LIMIT 10")
                }.compactMap(\.dueDate)
            })
            if dates != sqlDates || dates.count != 10 { notes.append("top n=\(n): ObjectStore \(dates.count) dates, \(journal.system) \(sqlDates.count), different") }
        }
    }

    /// 13. Find tasks by title, one fetch per title (20 titles spread over the store), the
    /// store open and compacted, each found task's priority read: with a schema index on
    /// `title` (the current model with `byTitle` added), without it (the model as shipped),
    /// and SQLite with and without an index on `title`.
    mutating func lookup(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let directory = try OS.models()
        let indexed = try OS.currentModel(adding: ("byTitle", "title"))
        let titles = (0..<20).map { data[($0 * 7_919) % data.count].title }
        let expected = titles.map { title in data.filter { $0.title == title }.count }
        for (system, model) in [("ObjectStore, index on title", indexed), ("ObjectStore, no index", try directory.currentModel())] {
            let coordinator = try OS.build(dir.appendingPathComponent("t-\(model == indexed ? "indexed" : "plain").store"), data, model: model)
            var found: [Int] = []
            // The same lookups in a context that holds every task (each is tested as it is).
            let holder = ManagedObjectContext(coordinator: coordinator)
            holder.undoManager = nil
            let held = try holder.fetch(FetchRequest(entityName: "Task"))
            var heldFound: [Int] = []
            record("13 lookup 20 titles, every task held", n, system, try measure(options.runs, setup: { () }) {
                heldFound = try titles.map { title in
                    try holder.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "title == %@", .string(title)))).count
                }
            })
            withExtendedLifetime(held) {}
            if heldFound != expected { notes.append("lookup n=\(n): \(system), every task held, found \(heldFound.reduce(0, +)) tasks") }
            record("13 lookup 20 titles", n, system, try measure(options.runs, setup: { () }) {
                let reader = ManagedObjectContext(coordinator: coordinator)
                found = try titles.map { title in
                    let tasks = try reader.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "title == %@", .string(title))))
                    for task in tasks { _ = task["priority"] }
                    return tasks.count
                }
            })
            if found != expected { notes.append("lookup n=\(n): \(system) found \(found.reduce(0, +)) tasks, expected \(expected.reduce(0, +))") }
        }
        // What the index costs a compaction: the same stores compacted again, and one whose
        // titles are not ASCII (their keys are folded through Foundation).
        var accented = data
        for i in accented.indices { accented[i].title += " \u{E9}t\u{E9} \u{C5}NGSTR\u{D6}M" }
        for (system, model, rows) in [("compact, index on title", indexed, data), ("compact, no index", try directory.currentModel(), data),
                                      ("compact, index on accented titles", indexed, accented)] {
            let coordinator = try OS.build(dir.appendingPathComponent("c-\(system.count).store"), rows, model: model, compacted: false)
            record("13 compact", n, system, try measure(options.runs, setup: { () }) { try coordinator.compactStore() })
        }
        for withIndex in [true, false] {
            let queue = try SQL.create(dir.appendingPathComponent("t-\(withIndex).sqlite"), .wal)
            try SQL.insertPrepared(queue, data)
            if withIndex { try queue.write { db in try db.execute(sql: "CREATE INDEX task_title ON task(title)") } }
            var found: [Int] = []
            record("13 lookup 20 titles", n, "GRDB WAL, \(withIndex ? "index on title" : "no index")", try measure(options.runs, setup: { () }) {
                found = try queue.read { db in
                    try titles.map { title in
                        let tasks = try GTask.fetchAll(db, sql: "SELECT * FROM task WHERE title = ?", arguments: [title])
                        for task in tasks { _ = task.priority }
                        return tasks.count
                    }
                }
            })
            if found != expected { notes.append("lookup n=\(n): GRDB found \(found.reduce(0, +)) tasks, expected \(expected.reduce(0, +))") }
        }
    }

    /// 14. The high-priority tasks of one location (2% of the tasks are at each, half of
    /// those match), for 5 locations, one fetch each, the store open and compacted, each
    /// found task's title read: with a schema index on `location` (the current model with
    /// `byLocation` added), without it, through the location's `tasks` relationship (derived
    /// from the tasks' location, looked up in that index) filtered
    /// in memory (the Core Data way without a fetch), and SQLite over its `task_location`
    /// index.
    mutating func place(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let directory = try OS.models()
        let indexed = try OS.currentModel(adding: ("byLocation", "location")), plain = try directory.currentModel()
        let places = [3, 11, 19, 27, 42]
        let expected = places.map { p in data.filter { $0.location == p && $0.priority >= 2 }.count }
        for (system, model, viaInverse) in [("ObjectStore, index on location", indexed, false), ("ObjectStore, no index", plain, false),
                                            ("ObjectStore, location.tasks filtered", indexed, true)] {
            let coordinator = try OS.build(dir.appendingPathComponent("t-\(system.count).store"), data, model: model)
            var found: [Int] = []
            record("14 tasks of 5 locations", n, system, try measure(options.runs, setup: { () }) {
                let reader = ManagedObjectContext(coordinator: coordinator)
                found = try places.map { p in
                    let location = try reader.fetch(FetchRequest(entityName: "Location", predicate: try ObjectPredicate(format: "name == %@", .string("Location \(p)")))).first
                    guard let location else { return -1 }
                    let tasks: [ManagedObject]
                    if viaInverse {
                        tasks = try location.objects(forKey: "tasks").filter { task in
                            if case .integer(let priority) = task["priority"] { return priority >= 2 }
                            return false
                        }
                    } else {
                        tasks = try reader.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(
                            format: "location == %@ AND priority >= 2", .uri(location.objectID.uriRepresentation))))
                    }
                    for task in tasks { _ = task["title"] }
                    return tasks.count
                }
            })
            if found != expected { notes.append("place n=\(n): \(system) found \(found), expected \(expected)") }
        }
        let queue = try SQL.create(dir.appendingPathComponent("t.sqlite"), .wal)
        try SQL.insertPrepared(queue, data)
        var found: [Int] = []
        record("14 tasks of 5 locations", n, "GRDB WAL", try measure(options.runs, setup: { () }) {
            found = try queue.read { db in
                try places.map { p in
                    guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM location WHERE name = ?", arguments: ["Location \(p)"]) else { return -1 }
                    let tasks = try GTask.fetchAll(db, sql: "SELECT * FROM task WHERE locationId = ? AND priority >= 2", arguments: [id])
                    for task in tasks { _ = task.title }
                    return tasks.count
                }
            }
        })
        if found != expected { notes.append("place n=\(n): GRDB found \(found), expected \(expected)") }
    }

    /// 11. Group every task by priority with a count and the latest due date, the store
    /// open (the context holds no task).
    mutating func group(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = dir.appendingPathComponent("t.store")
        try OS.build(store, data)
        let context = try OS.open(store)
        var groups = 0
        record("11 group by priority", n, "ObjectStore", try measure(options.runs, setup: { () }) {
            let rows = try context.fetchGroups(FetchRequest(entityName: "Task"), groupBy: ["priority"],
                                               aggregates: [PropertyAggregate("n", .count, of: "title"), PropertyAggregate("latest", .max, of: "dueDate")])
            groups = rows.count
            context.reset()
        })
        for journal in SQL.Journal.allCases {
            let queue = try SQL.create(dir.appendingPathComponent("t-\(journal.rawValue).sqlite"), journal)
            try SQL.insertPrepared(queue, data)
            var sqlGroups = 0
            record("11 group by priority", n, journal.system, try measure(options.runs, setup: { () }) {
                sqlGroups = try queue.read { db in
                    try Row.fetchAll(db, sql: "SELECT priority, COUNT(title), MAX(dueDate) FROM task GROUP BY priority")
                }.count
            })
            if groups != sqlGroups { notes.append("group n=\(n): ObjectStore \(groups) groups, \(journal.system) \(sqlGroups)") }
        }
    }

    /// 3. Edit 100 objects (and 1%) and save, at several store sizes.
    mutating func edit(_ sizes: [Int]) throws {
        for n in sizes {
            let data = TaskData.make(n)
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let store = dir.appendingPathComponent("t.store")
            try OS.build(store, data)
            var queues: [(SQL.Journal, any DatabaseWriter)] = []
            for journal in SQL.Journal.allCases {
                let queue = try SQL.create(dir.appendingPathComponent("t-\(journal.rawValue).sqlite"), journal)
                try SQL.insertPrepared(queue, data)
                queues.append((journal, queue))
            }
            // Each durability on its own copy (a .full save would flush the other's commits).
            let normal = dir.appendingPathComponent("t-normal.store")
            try FileManager.default.copyItem(at: store, to: normal)
            let recorded = dir.appendingPathComponent("t-history.store")
            try FileManager.default.copyItem(at: store, to: recorded)
            let contexts = [("ObjectStore", try OS.open(store)), ("ObjectStore history", try OS.open(recorded, history: HistoryRetention(transactions: 1_000))),
                            ("ObjectStore .normal", try OS.open(normal, durability: .normal))]
            let identifier = contexts[0].1.coordinator.storeIdentifier
            var round: Int64 = 0
            // The third row: 300 saves of 100 edits in a row, timed per save, so what the
            // saves leave behind is paid in the row too (compactions for ObjectStore, WAL
            // checkpoints for SQLite); one save at a time leaves it out.
            for (label, count, saves) in [("3 edit 100+save", 100, 1), ("3 edit 1%+save", max(1, n / 100), 1), ("3 edit 100+save, 300 in a row", 100, 300)] {
                for (system, context) in contexts {
                    record(label, n, system, try measure(options.runs, setup: { () }) {
                        for _ in 0..<saves {
                            round += 1
                            for key in 1...Int64(count) {
                                let task = try context.existingObject(with: ObjectID(entityName: "Task", storeIdentifier: identifier, key: .permanent(key * 7 % Int64(n) + 1)))
                                try task.setValue(.integer((round + key) % 4), forKey: "priority")
                            }
                            try context.save()
                        }
                    }.map { $0 / Double(saves) })
                }
                for (journal, queue) in queues {
                    record(label, n, journal.system, try measure(options.runs, setup: { () }) {
                        for _ in 0..<saves {
                            round += 1
                            try queue.write { db in
                                let statement = try db.makeStatement(sql: "UPDATE task SET priority = ? WHERE id = ?")
                                for key in 1...Int64(count) { try statement.execute(arguments: [(round + key) % 4, key * 7 % Int64(n) + 1]) }
                            }
                        }
                    }.map { $0 / Double(saves) })
                }
            }
        }
    }

    /// 4. Delete 10% with their relationships and save.
    mutating func delete(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var k = 0
        // With full sync (one `fdatasync` a save) and with `.normal` (none, as GRDB's WAL
        // with `synchronous=NORMAL`).
        for durability in [StoreDurability.full, .normal] {
            record("4 delete 10%+save", n, durability == .full ? "ObjectStore" : "ObjectStore .normal", try measure(options.runs, setup: { () -> ManagedObjectContext in
                k += 1
                let url = dir.appendingPathComponent("d\(k).store")
                try OS.build(url, data)
                return try OS.open(url, durability: durability)
            }) { context in
                let identifier = context.coordinator.storeIdentifier
                for key in stride(from: 10, through: n, by: 10) {
                    context.delete(try context.object(with: ObjectID(entityName: "Task", storeIdentifier: identifier, key: .permanent(Int64(key)))))
                }
                try context.save()
            })
        }
        for journal in SQL.Journal.allCases {
            record("4 delete 10%+save", n, journal.system, try measure(options.runs, setup: { () -> any DatabaseWriter in
                k += 1
                let queue = try SQL.create(dir.appendingPathComponent("d\(k).sqlite"), journal)
                try SQL.insertPrepared(queue, data)
                return queue
            }) { queue in
                try queue.write { db in try db.execute(sql: "DELETE FROM task WHERE id % 10 = 0") }
            })
        }
    }

    /// 5. Count with a predicate (store already open).
    mutating func count(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = dir.appendingPathComponent("t.store")
        try OS.build(store, data)
        let context = try OS.open(store)
        var a = 0
        record("5 count", n, "ObjectStore", try measure(options.runs, setup: { () }) {
            a = try context.count(for: FetchRequest(entityName: "Task", predicate: OS.predicate))
        })
        for journal in SQL.Journal.allCases {
            let queue = try SQL.create(dir.appendingPathComponent("t-\(journal.rawValue).sqlite"), journal)
            try SQL.insertPrepared(queue, data)
            var b = 0
            record("5 count", n, journal.system, try measure(options.runs, setup: { () }) {
                b = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM task WHERE priority >= 2 AND dueDate < ?", arguments: [TaskData.cutoff]) ?? 0 }
            })
            if a != b { notes.append("count n=\(n): ObjectStore \(a), \(journal.system) \(b)") }
        }
    }

    /// 6. Fault in every object one by one, and in batches of 1,000.
    mutating func fault(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = dir.appendingPathComponent("t.store")
        try OS.build(store, data)
        for batch in [0, 1_000] {
            record("6 fault all", n, batch == 0 ? "one by one" : "batches of 1000", try measure(options.runs, setup: { () }) {
                let context = try OS.open(store)
                var request = FetchRequest(entityName: "Task")
                request.fetchBatchSize = batch
                for task in try context.fetch(request) { _ = task["title"] }
            })
        }
    }

    /// 7. Migrate a v1 store of N tasks to the current model; peak memory measured in a child.
    mutating func migrate(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var k = 0
        record("7 migrate v1->current", n, "ObjectStore", try measure(options.runs, setup: { () -> URL in
            k += 1
            let url = dir.appendingPathComponent("m\(k).store")
            try OS.build(url, data, version: "v1")
            return url
        }) { url in
            _ = try StoreMigrator(models: try OS.models()).migrate(storeURL: url)
        })
        let url = dir.appendingPathComponent("child.store")
        try OS.build(url, data, version: "v1")
        let peak = try child(["--child-migrate", url.path])
        notes.append("7 migrate n=\(n): peak resident memory \(peak / 1_048_576) MiB (store \(((try? FileManager.default.attributesOfItem(atPath: url.path + ".v1-backup")[.size] as? Int) ?? 0) / 1024) KiB)")
    }

    /// 8. Peak resident memory of a process holding every object loaded.
    mutating func memory(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("t.store")
        try OS.build(url, data)
        let peak = try child(["--child-hold", url.path])
        let baseline = try child(["--child-baseline"])
        notes.append("8 hold \(n) loaded objects: peak resident memory \(peak / 1_048_576) MiB (an idle process: \(baseline / 1_048_576) MiB)")
    }

    /// 9. Predicate evaluation over N in-memory objects vs a hand-written filter.
    mutating func evaluate(_ n: Int, _ data: [TaskData]) throws {
        let model = try OS.models().currentModel()
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(inMemoryWith: model))
        context.undoManager = nil
        try OS.insert(data, into: context)
        try context.save()
        let objects = try context.fetch(FetchRequest(entityName: "Task"))
        for object in objects { _ = object["title"] }
        var a = 0, b = 0, c = 0
        record("9 filter objects", n, "predicate", try measure(options.runs, setup: { () }) {
            a = try context.fetch(FetchRequest(entityName: "Task", predicate: OS.predicate)).count
        })
        let cutoff = TaskData.cutoff
        record("9 filter objects", n, "hand-written", measure(options.runs, setup: { () }) {
            b = objects.filter { task in
                guard case .integer(let p) = task["priority"], p >= 2, case .date(let d) = task["dueDate"] else { return false }
                return d < cutoff
            }.count
        })
        record("9 filter objects", n, "plain structs", measure(options.runs, setup: { () }) {
            c = data.filter { $0.priority >= 2 && ($0.due.map { $0 < cutoff } ?? false) }.count
        })
        if a != b || b != c { notes.append("evaluate n=\(n): counts differ \(a) \(b) \(c)") }
    }

    /// 16-17. A batch update and a batch delete in the store (no objects made), beside SQL's
    /// `UPDATE ... WHERE` and `DELETE ... WHERE`; each run on a new copy of the data. The
    /// update's peak memory, in a child process, for the largest size.
    mutating func batch(_ n: Int, _ data: [TaskData]) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var k = 0
        func objectStore() throws -> ManagedObjectContext {
            k += 1
            let url = dir.appendingPathComponent("b\(k).store")
            try OS.build(url, data)
            return try OS.open(url)
        }
        func sqlite(_ journal: SQL.Journal) throws -> any DatabaseWriter {
            k += 1
            let queue = try SQL.create(dir.appendingPathComponent("b\(k).sqlite"), journal)
            try SQL.insertPrepared(queue, data)
            return queue
        }
        var updated = 0, deleted = 0
        record("16 batch update", n, "ObjectStore", try measure(options.runs, setup: objectStore) { context in
            var request = BatchUpdateRequest(entityName: "Task", predicate: try ObjectPredicate("priority < 2"), propertiesToUpdate: ["priority": .integer(3)])
            request.resultType = .count
            updated = try context.execute(request).count ?? 0
        })
        for journal in SQL.Journal.allCases {
            var changes = 0
            record("16 batch update", n, journal.system, try measure(options.runs, setup: { try sqlite(journal) }) { queue in
                try queue.write { db in
                    try db.execute(sql: "UPDATE task SET priority = 3 WHERE priority < 2")
                    changes = db.changesCount
                }
            })
            if changes != updated { notes.append("batch update n=\(n): ObjectStore \(updated), \(journal.system) \(changes)") }
        }
        record("17 batch delete", n, "ObjectStore", try measure(options.runs, setup: objectStore) { context in
            var request = BatchDeleteRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 0"))
            request.resultType = .count
            deleted = try context.execute(request).count ?? 0
        })
        for journal in SQL.Journal.allCases {
            var changes = 0
            record("17 batch delete", n, journal.system, try measure(options.runs, setup: { try sqlite(journal) }) { queue in
                try queue.write { db in
                    try db.execute(sql: "DELETE FROM task WHERE priority = 0")
                    changes = db.changesCount
                }
            })
            if changes != deleted { notes.append("batch delete n=\(n): ObjectStore \(deleted), \(journal.system) \(changes)") }
        }
        if n == options.sizes.max() {
            let url = dir.appendingPathComponent("child.store")
            try OS.build(url, data)
            let peak = try child(["--child-batch-update", url.path])
            notes.append("16 batch update of every one of \(n) tasks: peak resident memory \(peak / 1_048_576) MiB")
        }
    }

    /// 18. A key path through a to-one into a large group: n employees in 5 departments, the
    /// store open, a fetch of the employees whose department's name is one of them, each
    /// found employee's name read, beside SQLite's join. The department's employees are a
    /// stored to-many (the model's default: each department's row holds its list) or derived
    /// from the employees' department; first with a schema index on the employees'
    /// department, as SQLite's table has one on its column.
    mutating func reach(_ n: Int) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var expected = 0
        for (derived, indexed) in [(false, true), (false, false), (true, false)] {
            let url = dir.appendingPathComponent("org-\(derived)-\(indexed).store")
            let model = try Organisation.build(url, n, derivedList: derived, indexed: indexed)
            var found = 0
            record("18 key path through a to-one", n, indexed ? "ObjectStore, index on department" : derived ? "ObjectStore, derived list" : "ObjectStore, stored list", try measure(options.runs, setup: {
                ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
            }) { context in
                let employees = try context.fetch(FetchRequest(entityName: "Employee", predicate: try ObjectPredicate("department.name == 'Department 3'")))
                for employee in employees { _ = employee["name"] }
                found = employees.count
            })
            expected = found
        }
        let queue = try DatabasePool(path: dir.appendingPathComponent("org.sqlite").path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE department (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE employee (id INTEGER PRIMARY KEY, name TEXT NOT NULL, departmentId INTEGER REFERENCES department(id));
                CREATE INDEX employee_department ON employee(departmentId);
                """)
            for d in 0..<5 { try db.execute(sql: "INSERT INTO department (id, name) VALUES (?, ?)", arguments: [d + 1, "Department \(d)"]) }
            let insert = try db.makeStatement(sql: "INSERT INTO employee (name, departmentId) VALUES (?, ?)")
            for e in 0..<n { try insert.execute(arguments: ["Employee \(e)", e % 5 + 1]) }
        }
        var found = 0
        record("18 key path through a to-one", n, "GRDB WAL join", try measure(options.runs, setup: { () }) {
            found = try queue.read { db in
                let names = try String.fetchAll(db, sql: "SELECT employee.name FROM employee JOIN department ON department.id = employee.departmentId WHERE department.name = ?",
                                                arguments: ["Department 3"])
                return names.count
            }
        })
        if found != expected { notes.append("reach n=\(n): ObjectStore found \(expected), GRDB \(found)") }
    }

    func child(_ arguments: [String]) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}

/// Workload 18's store: `n` employees in 5 departments ("Department 0" to "Department 4"), the
/// departments' employees a stored list or derived from the employees' department, the
/// employees' department indexed or not; returns the model.
enum Organisation {
    static func build(_ url: URL, _ n: Int, derivedList: Bool, indexed: Bool = false) throws -> ManagedObjectModel {
        let schema = """
            { "entities": [
              { "name": "Department", "attributes": [{ "name": "name", "type": "string" }],
                "relationships": [{ "name": "employees", "destination": "Employee", "inverse": "department", "toMany": true\(derivedList ? ", \"derivedFromInverse\": true" : "") }] },
              { "name": "Employee", "attributes": [{ "name": "name", "type": "string" }],
                "relationships": [{ "name": "department", "destination": "Department", "inverse": "employees" }]\(indexed ? ", \"indexes\": [{ \"name\": \"byDepartment\", \"properties\": [\"department\"] }]" : "") }
            ] }
            """
        let model = try ManagedObjectModel(schema: schema, file: "org")
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
        context.undoManager = nil
        var departments: [ManagedObject] = []
        for d in 0..<5 {
            let department = try context.insertObject(entityName: "Department")
            try department.setValue(.string("Department \(d)"), forKey: "name")
            departments.append(department)
        }
        for e in 0..<n {
            let employee = try context.insertObject(entityName: "Employee")
            try employee.setValue(.string("Employee \(e)"), forKey: "name")
            try employee.setObject(departments[e % 5], forKey: "department")
        }
        try context.save()
        try context.coordinator.compactStore()
        return model
    }
}
