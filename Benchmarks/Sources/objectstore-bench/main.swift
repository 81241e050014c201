import Foundation
import ObjectStore
import ObjectStoreModel

// objectstore-bench: ObjectStore side by side with GRDB (SQLite), in one run on one machine.
//
//   swift run -c release objectstore-bench [--sizes 10000,100000] [--runs 5] [--only insert,fetch,...]
//                                          [--edit-sizes 10000,100000,1000000] [--json]
//
// Workloads: open, insert, fetch, edit, delete, count, fault, migrate, memory, evaluate, select, group, top,
// lookup, place, batch, reach.

let arguments = Array(CommandLine.arguments.dropFirst())

// Child modes report one number (peak resident bytes) and exit.
if arguments.first == "--child-migrate", arguments.count == 2 {
    _ = try StoreMigrator(models: try OS.models()).migrate(storeURL: URL(fileURLWithPath: arguments[1]))
    print(peakResidentBytes())
    exit(0)
}
if arguments.first == "--child-hold", arguments.count == 2 {
    let context = try OS.open(URL(fileURLWithPath: arguments[1]))
    let tasks = try context.fetch(FetchRequest(entityName: "Task"))
    var touched = 0
    for task in tasks where task["title"] != .null { touched += 1 }
    print(peakResidentBytes())
    withExtendedLifetime(tasks) {}
    exit(touched > 0 ? 0 : 1)
}
// For a profiler: build a store of N tasks, then `rounds` times edit 100 of them and save
// (`.normal`), as workload 3 does, with nothing else in the process after the build; with
// OBJECTSTORE_BENCH_HISTORY=1, each save records its transaction (retention 1,000).
if arguments.first == "--profile-edit", arguments.count == 4, let n = Int(arguments[2]), let rounds = Int(arguments[3]) {
    let url = URL(fileURLWithPath: arguments[1])
    if !FileManager.default.fileExists(atPath: url.path) { try OS.build(url, TaskData.make(n)) }
    let history = ProcessInfo.processInfo.environment["OBJECTSTORE_BENCH_HISTORY"] == "1" ? HistoryRetention(transactions: 1_000) : nil
    let context = try OS.open(url, durability: .normal, history: history)
    let identifier = context.coordinator.storeIdentifier
    let start = DispatchTime.now().uptimeNanoseconds
    for round in 1...Int64(max(1, rounds)) {
        for key in 1...Int64(100) {
            let task = try context.existingObject(with: ObjectID(entityName: "Task", storeIdentifier: identifier, key: .permanent(key * 7 % Int64(n) + 1)))
            try task.setValue(.integer((round + key) % 4), forKey: "priority")
        }
        try context.save()
    }
    print("\((DispatchTime.now().uptimeNanoseconds - start) / UInt64(max(1, rounds)) / 1000) us a round")
    exit(0)
}
// Open an existing store `rounds` times (each a new coordinator), and read one object.
if arguments.first == "--profile-open", arguments.count == 3, let rounds = Int(arguments[2]) {
    let url = URL(fileURLWithPath: arguments[1])
    var times: [UInt64] = []
    for _ in 0..<max(1, rounds) {
        let start = DispatchTime.now().uptimeNanoseconds
        let context = try OS.open(url)
        _ = try context.existingObject(with: ObjectID(entityName: "Task", storeIdentifier: context.coordinator.storeIdentifier, key: .permanent(1)))["title"]
        times.append(DispatchTime.now().uptimeNanoseconds - start)
    }
    times.sort()
    print("open: median \(times[times.count / 2] / 1000) us, fastest \(times[0] / 1000) us, file \((try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0) B")
    exit(0)
}
// For a profiler: workload 13's lookups (20 titles, an index on title), `rounds` times, each
// round in a new context, on a store of N tasks built in memory's temporary directory first;
// with OBJECTSTORE_BENCH_NOINDEX=1, without the index (each lookup scans every row).
if arguments.first == "--profile-lookup", arguments.count == 3, let n = Int(arguments[1]), let rounds = Int(arguments[2]) {
    let data = TaskData.make(n)
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let model = ProcessInfo.processInfo.environment["OBJECTSTORE_BENCH_NOINDEX"] == "1" ? try OS.models().currentModel() : try OS.currentModel(adding: ("byTitle", "title"))
    let coordinator = try OS.build(dir.appendingPathComponent("t.store"), data, model: model)
    let titles = (0..<20).map { data[($0 * 7_919) % data.count].title }
    let start = DispatchTime.now().uptimeNanoseconds
    var found = 0
    for _ in 0..<max(1, rounds) {
        let reader = ManagedObjectContext(coordinator: coordinator)
        for title in titles {
            let tasks = try reader.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate(format: "title == %@", .string(title))))
            for task in tasks { _ = task["priority"] }
            found += tasks.count
        }
    }
    print("\((DispatchTime.now().uptimeNanoseconds - start) / UInt64(max(1, rounds)) / 1000) us a round of 20 lookups, \(found / max(1, rounds)) found a round")
    try? FileManager.default.removeItem(at: dir)  // exit(0) runs no defer
    exit(0)
}
// For a profiler: workload 9's predicate fetch over N objects held in an in-memory store's
// context, `rounds` times.
if arguments.first == "--profile-evaluate", arguments.count == 3, let n = Int(arguments[1]), let rounds = Int(arguments[2]) {
    let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(inMemoryWith: try OS.models().currentModel()))
    context.undoManager = nil
    try OS.insert(TaskData.make(n), into: context)
    try context.save()
    let objects = try context.fetch(FetchRequest(entityName: "Task"))
    for object in objects { _ = object["title"] }
    let start = DispatchTime.now().uptimeNanoseconds
    var found = 0
    for _ in 0..<max(1, rounds) { found += try context.fetch(FetchRequest(entityName: "Task", predicate: OS.predicate)).count }
    print("\((DispatchTime.now().uptimeNanoseconds - start) / UInt64(max(1, rounds)) / 1000) us a fetch, \(found / max(1, rounds)) found")
    exit(0)
}
/// The mean time of `body` over `rounds` rounds, each on a fresh copy of a store of `n` tasks
/// opened with `durability` (the copy and the open untimed), in microseconds.
func microsecondsOnFreshCopies(_ n: Int, rounds: Int, durability: StoreDurability = .full, _ body: (ManagedObjectContext) throws -> Void) throws -> UInt64 {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let original = dir.appendingPathComponent("t.store")
    try OS.build(original, TaskData.make(n))
    var total: UInt64 = 0
    for round in 0..<max(1, rounds) {
        let url = dir.appendingPathComponent("r\(round).store")
        try FileManager.default.copyItem(at: original, to: url)
        let context = try OS.open(url, durability: durability)
        let start = DispatchTime.now().uptimeNanoseconds
        try body(context)
        total += DispatchTime.now().uptimeNanoseconds - start
        try? FileManager.default.removeItem(at: url)
    }
    return total / UInt64(max(1, rounds)) / 1000
}
// For a profiler: workload 4's delete of every tenth task and save, `rounds` times, each on a
// fresh copy of a store of N tasks (`.normal` with OBJECTSTORE_BENCH_NORMAL=1).
if arguments.first == "--profile-delete", arguments.count == 3, let n = Int(arguments[1]), let rounds = Int(arguments[2]) {
    let durability: StoreDurability = ProcessInfo.processInfo.environment["OBJECTSTORE_BENCH_NORMAL"] == "1" ? .normal : .full
    let time = try microsecondsOnFreshCopies(n, rounds: rounds, durability: durability) { context in
        let identifier = context.coordinator.storeIdentifier
        for key in stride(from: 10, through: n, by: 10) {
            context.delete(try context.object(with: ObjectID(entityName: "Task", storeIdentifier: identifier, key: .permanent(Int64(key)))))
        }
        try context.save()
    }
    print("\(time) us a delete and save")
    exit(0)
}
// For a profiler: workload 1's insert of N tasks and save, `rounds` times, each into a new
// store.
if arguments.first == "--profile-insert", arguments.count == 3, let n = Int(arguments[1]), let rounds = Int(arguments[2]) {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let data = TaskData.make(n)
    let start = DispatchTime.now().uptimeNanoseconds
    for round in 0..<max(1, rounds) { try OS.build(dir.appendingPathComponent("r\(round).store"), data) }
    print("\((DispatchTime.now().uptimeNanoseconds - start) / UInt64(max(1, rounds)) / 1000) us an insert and save")
    try? FileManager.default.removeItem(at: dir)  // exit(0) runs no defer
    exit(0)
}
// For a profiler: compact an existing store `rounds` times.
if arguments.first == "--profile-compact", arguments.count == 3, let rounds = Int(arguments[2]) {
    let context = try OS.open(URL(fileURLWithPath: arguments[1]), durability: .normal)
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<max(1, rounds) { try context.coordinator.compactStore() }
    print("\((DispatchTime.now().uptimeNanoseconds - start) / UInt64(max(1, rounds)) / 1000) us a compaction")
    exit(0)
}
// For a profiler: workload 16's batch update (`priority < 2` set to 3), or with
// OBJECTSTORE_BENCH_DELETE=1 workload 17's batch delete (`priority == 0`), `rounds` times,
// each on a fresh copy of a store of N tasks.
if arguments.first == "--profile-batch", arguments.count == 3, let n = Int(arguments[1]), let rounds = Int(arguments[2]) {
    let deleting = ProcessInfo.processInfo.environment["OBJECTSTORE_BENCH_DELETE"] == "1"
    let time = try microsecondsOnFreshCopies(n, rounds: rounds) { context in
        if deleting {
            var request = BatchDeleteRequest(entityName: "Task", predicate: try ObjectPredicate("priority == 0"))
            request.resultType = .count
            _ = try context.execute(request)
            return
        }
        var request = BatchUpdateRequest(entityName: "Task", predicate: try ObjectPredicate("priority < 2"), propertiesToUpdate: ["priority": .integer(3)])
        request.resultType = .count
        _ = try context.execute(request)
    }
    print("\(time) us a batch \(deleting ? "delete" : "update")")
    exit(0)
}
// For a profiler: workload 11's group by priority, `rounds` times, in a store of N tasks.
if arguments.first == "--profile-group", arguments.count == 3, let n = Int(arguments[1]), let rounds = Int(arguments[2]) {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = dir.appendingPathComponent("t.store")
    try OS.build(url, TaskData.make(n))
    let context = try OS.open(url)
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<max(1, rounds) {
        _ = try context.fetchGroups(FetchRequest(entityName: "Task"), groupBy: ["priority"],
                                    aggregates: [PropertyAggregate("n", .count, of: "title"), PropertyAggregate("latest", .max, of: "dueDate")])
        context.reset()
    }
    print("\((DispatchTime.now().uptimeNanoseconds - start) / UInt64(max(1, rounds)) / 1000) us a group by")
    try? FileManager.default.removeItem(at: dir)  // exit(0) runs no defer
    exit(0)
}
// For a profiler: workload 18's fetch of one department's employees by
// `department.name == 'Department 3'`, each one's name read, `rounds` times, each in a new
// coordinator of a store of N employees (derived list with OBJECTSTORE_BENCH_DERIVED=1, a
// schema index on the employees' department with OBJECTSTORE_BENCH_INDEXED=1).
if arguments.first == "--profile-reach", arguments.count == 3, let n = Int(arguments[1]), let rounds = Int(arguments[2]) {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = dir.appendingPathComponent("org.store")
    let model = try Organisation.build(url, n, derivedList: ProcessInfo.processInfo.environment["OBJECTSTORE_BENCH_DERIVED"] == "1",
                                       indexed: ProcessInfo.processInfo.environment["OBJECTSTORE_BENCH_INDEXED"] == "1")
    var total: UInt64 = 0
    var found = 0
    for _ in 0..<max(1, rounds) {
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
        let start = DispatchTime.now().uptimeNanoseconds
        let employees = try context.fetch(FetchRequest(entityName: "Employee", predicate: try ObjectPredicate("department.name == 'Department 3'")))
        for employee in employees { _ = employee["name"] }
        found += employees.count
        total += DispatchTime.now().uptimeNanoseconds - start
    }
    print("\(total / UInt64(max(1, rounds)) / 1000) us a fetch, \(found / max(1, rounds)) found")
    try? FileManager.default.removeItem(at: dir)  // exit(0) runs no defer
    exit(0)
}
// A batch update of every task of an existing store.
if arguments.first == "--child-batch-update", arguments.count == 2 {
    let context = try OS.open(URL(fileURLWithPath: arguments[1]))
    var request = BatchUpdateRequest(entityName: "Task", propertiesToUpdate: ["priority": .integer(3)])
    request.resultType = .count
    let changed = try context.execute(request).count ?? 0
    print(peakResidentBytes())
    exit(changed > 0 ? 0 : 1)
}
if arguments.first == "--child-baseline" {
    _ = try OS.models().currentModel()
    print(peakResidentBytes())
    exit(0)
}

let options = Options(arguments)
var workloads = Workloads(options: options)
FileHandle.standardError.write(Data("objectstore-bench: sizes \(options.sizes), \(options.runs) runs after a warm-up\n".utf8))
try workloads.runAll()

// The table: per workload and size, each system's median and spread, and the ratio to the
// first system of the row group (ObjectStore) against each peer.
let groups = Dictionary(grouping: workloads.samples) { "\($0.workload)|\($0.size)" }
let order = workloads.samples.map { "\($0.workload)|\($0.size)" }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
if options.json {
    var rows: [String] = []
    for sample in workloads.samples {
        rows.append("{\"workload\": \"\(sample.workload)\", \"n\": \(sample.size), \"system\": \"\(sample.system)\", \"median\": \(sample.median), \"min\": \(sample.spread.0), \"max\": \(sample.spread.1)}")
    }
    print("[\n  " + rows.joined(separator: ",\n  ") + "\n]")
    // The notes (peak memory, disagreements) where the progress goes, beside the JSON.
    for note in workloads.notes { FileHandle.standardError.write(Data("- \(note)\n".utf8)) }
} else {
    print("| workload | n | system | median | spread (min-max) | first / this |")
    print("| --- | ---: | --- | ---: | --- | ---: |")
    for key in order {
        guard let members = groups[key], let first = members.first else { continue }
        for sample in members {
            let ratio = sample.system == first.system ? "" : String(format: "%.2fx", first.median / sample.median)
            print("| \(sample.workload) | \(sample.size) | \(sample.system) | \(format(sample.median)) | \(format(sample.spread.0))-\(format(sample.spread.1)) | \(ratio) |")
        }
    }
    for note in workloads.notes { print("\n- \(note)") }
}
