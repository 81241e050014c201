import Foundation
import Testing

/// Several taskctl processes mixing every kind of change on one store at once; the final
/// store is checked against what each acknowledged. OBJECTSTORE_STRESS_OPS sets the
/// operations per worker (a short run in CI; docs/reliability.md has a long one).
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct StressTests {
    static let operations = ProcessInfo.processInfo.environment["OBJECTSTORE_STRESS_OPS"].flatMap(Int.init) ?? 14
    static let workers = 3

    struct TaskState: Equatable, CustomStringConvertible {
        var text: String
        var status: String
        var location: String?
        var description: String { "\(text)/\(status)/\(location ?? "-")" }
    }

    /// What one worker did: its acknowledged states per task, and undo reports.
    final class Log: @unchecked Sendable {
        var history: [Int: [TaskState]] = [:]
        var failures: [(command: [String], task: Int?, message: String)] = []
        var undone: Set<Int> = []
        var undos = 0
        var acknowledged = 0
    }

    @Test(arguments: ["tasks.store", "tasks.json"])
    func mixedConcurrentChangesKeepEveryAcknowledgedOne(storeName: String) throws {
        let t = try TaskctlRunner(storeName: storeName)
        try t.ok("location", "add", "Home")
        try t.ok("location", "add", "Office")
        let logs = (0..<Self.workers).map { _ in Log() }
        let group = DispatchGroup()
        // The workers only read the runner's settings (each command is its own process).
        nonisolated(unsafe) let runner = t
        for worker in 0..<Self.workers {
            group.enter()
            Thread {
                defer { group.leave() }
                Self.work(worker, t: runner, log: logs[worker], binaryStore: storeName.hasSuffix(".store"))
            }.start()
        }
        group.wait()

        let undone = logs.reduce(into: Set<Int>()) { $0.formUnion($1.undone) }
        for log in logs {
            for failure in log.failures where failure.task.map({ !undone.contains($0) }) ?? true {
                Issue.record("\(failure.command) failed: \(failure.message)")
            }
        }
        let check = try t.run("store", "check")
        #expect(check.status == 0, "\(check.out) \(check.err)")
        var final: [Int: TaskState] = [:]
        let exported = try t.run("export", "--all")
        let all = (try? JSONSerialization.jsonObject(with: Data(exported.out.utf8)) as? [[String: Any]]) ?? []
        #expect(exported.status == 0 && !all.isEmpty, "\(exported.err)")
        for task in all {
            guard let id = task["id"] as? Int, let text = task["text"] as? String, let status = task["status"] as? String else { continue }
            final[id] = TaskState(text: text, status: status, location: task["location"] as? String)
        }
        var exact = 0
        for log in logs {
            for (id, states) in log.history {
                if undone.contains(id) {
                    // Undos (of this or another worker's changes) revert the fields their
                    // command changed: each field holds one of the values it was given.
                    guard let now = final[id] else { continue }  // the add was undone
                    #expect(states.map(\.text).contains(now.text) && states.map(\.status).contains(now.status) && states.map(\.location).contains(now.location),
                            "task \(id): \(now) mixes values it never had: \(states)")
                } else {
                    #expect(final[id] == states.last, "task \(id): \(final[id].map(\.description) ?? "gone"), acknowledged \(states.last.map(\.description) ?? "-")")
                    exact += 1
                }
            }
        }
        let acknowledged = logs.map(\.acknowledged).reduce(0, +)
        print("stress (\(storeName)): \(Self.workers) workers x \(Self.operations) operations, \(acknowledged) acknowledged, \(logs.map(\.undos).reduce(0, +)) undos, \(exact) tasks checked exactly")
        #expect(acknowledged >= Self.workers * Self.operations / 2, "too few operations succeeded to prove anything")
        #expect(exact > 0)
    }

    static func work(_ worker: Int, t: TaskctlRunner, log: Log, binaryStore: Bool) {
        var random = SeededRandom(seed: UInt64(worker + 1) * 7919)
        var mine: [Int: TaskState] = [:]
        func run(_ arguments: [String], task: Int?) -> String? {
            guard let result = try? t.run(arguments) else { return nil }
            guard result.status == 0 else {
                log.failures.append((arguments, task, result.err))
                return nil
            }
            log.acknowledged += 1
            return result.out
        }
        func record(_ id: Int, _ state: TaskState) {
            mine[id] = state
            log.history[id, default: []].append(state)
        }
        for step in 0..<operations {
            let live = mine.filter { $0.value.status != "deleted" }.keys.sorted()
            let choice = live.isEmpty || step < 2 ? 0 : Int(random.next() % 7)
            let id = live.isEmpty ? 0 : live[Int(random.next() % UInt64(live.count))]
            let location = ["Home", "Office"][Int(random.next() % 2)]
            switch choice {
            case 0:
                let text = "w\(worker)-\(step)"
                if let out = run(["add", text, "--location", location], task: nil), let new = Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) {
                    record(new, TaskState(text: text, status: "pending", location: location))
                }
            case 1:
                let text = "w\(worker)-\(step) edited"
                if run(["edit", String(id), "--text", text], task: id) != nil, var state = mine[id] {
                    state.text = text
                    record(id, state)
                }
            case 2:
                if run(["edit", String(id), "--location", location], task: id) != nil, var state = mine[id] {
                    state.location = location
                    record(id, state)
                }
            case 3:
                guard mine[id]?.status == "pending" else { continue }
                if run(["done", String(id)], task: id) != nil, var state = mine[id] {
                    state.status = "done"
                    record(id, state)
                }
            case 4:
                if run(["delete", String(id)], task: id) != nil, var state = mine[id] {
                    state.status = "deleted"
                    record(id, state)
                }
            case 5:
                if binaryStore { _ = run(["store", "compact"], task: nil) } else { _ = run(["list"], task: nil) }
            default:
                // Undo reverts the last change of any worker; the tasks it names are checked
                // against every state they had.
                guard let result = try? t.run(["undo"]) else { continue }
                if result.status == 0 {
                    log.undos += 1
                    log.acknowledged += 1
                    let ids = result.out.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
                    log.undone.formUnion(ids)
                } else if !result.err.contains("cannot undo") && !result.err.contains("nothing to undo") {
                    log.failures.append((["undo"], nil, result.err))
                }
            }
        }
    }
}
