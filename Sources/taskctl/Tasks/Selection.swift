import Foundation
import ObjectStore
import ObjectStoreModel

extension App {
    /// The tasks a command changes or shows: those the filter before the command selects
    /// (`taskctl +shop done`, `taskctl 1-3 done`), and the ids, ranges and UUIDs after it
    /// (taskctl's own `done 1 2`). An id or UUID named alone must exist; a range takes the
    /// tasks it has. A filter of other words selects the tasks that are not deleted, unless
    /// it names a status. Ordered by id, each once.
    func selected(_ references: [String], in context: ManagedObjectContext, command: String) throws -> [ManagedObject] {
        if filter.isEmpty && references.isEmpty {
            throw CLIError.usage("\(command) needs tasks: taskctl \(command) ID..., or a filter before it (taskctl +shop \(command); see taskctl help filters)")
        }
        var chosen: [ManagedObject] = []
        if filter.isEmpty || filter.onlyIdentifiers {
            for (index, word) in (filter.identifiers + references).enumerated() {
                if index < filter.identifiers.count, TaskFilter.isUUID(word) {
                    // A UUID or its start, never an id (00000010 is not task 10).
                    let scope = FilterScope(app: self, context: context)
                    guard let predicate = try TaskFilter.parse([word]).predicate(in: scope) else { continue }
                    let found = try tasks(context, where: predicate)
                    guard found.count == 1 else {
                        throw CLIError.usage(found.isEmpty ? "no task has a UUID starting with \(word)"
                            : "\(word) starts the UUIDs of \(found.count) tasks (ids \(found.compactMap(\.objectID.primaryKey).map(String.init).joined(separator: ", "))); give more of it")
                    }
                    try expireIfPassed(found[0])
                    chosen += found
                } else if let ranges = try TaskFilter.idRanges(word), ranges.count > 1 || ranges[0].count > 1 {
                    let scope = FilterScope(app: self, context: context)
                    guard let predicate = try TaskFilter.parse([word]).predicate(in: scope) else { continue }
                    let found = try tasks(context, where: predicate)
                    if found.isEmpty { throw CLIError.usage("no task has an id in \(word); see taskctl list --all") }
                    chosen += found
                } else {
                    chosen.append(try task(word, in: context))
                }
            }
        } else {
            let all = references.isEmpty ? filter : try TaskFilter.parse(filter.words + references)
            guard let predicate = try all.predicate(in: FilterScope(app: self, context: context)) else { return [] }
            let live = all.namesStatus ? predicate : .and(.and(try ObjectPredicate("status != 'deleted'"), .not(try expired())), predicate)
            chosen = try tasks(context, where: live)
            if chosen.isEmpty { throw CLIError.usage("no task matches \(all.words.joined(separator: " ")); nothing changed") }
            for task in chosen { try expireIfPassed(task) }
        }
        var seen = Set<ObjectID>()
        return chosen.filter { seen.insert($0.objectID).inserted }
            .sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
    }

    /// Taskwarrior's rule for changing many tasks at once: `bulk` (3) tasks or more are
    /// confirmed first, the answer read from the standard input (yes or all goes on); no
    /// answer (the input at its end, as in a script) changes nothing. `--yes` answers yes;
    /// `bulk=0` never asks. As in Taskwarrior, `confirmation=off` does not skip this question.
    func confirmBulk(_ count: Int, _ verb: String, yes: Bool) throws {
        guard config.bulk > 0, count >= config.bulk, !yes else { return }
        FileHandle.standardError.write(Data("taskctl: \(verb) \(count) tasks? (yes/no) ".utf8))
        guard let answer = readLine(), ["y", "yes", "a", "all"].contains(answer.lowercased().trimmingBlanks()) else {
            throw CLIError.usage("\(verb) \(count) tasks was not confirmed; nothing changed (\(config.bulk) or more tasks at once are confirmed first, as Taskwarrior's bulk setting says: answer yes, or give --yes, or rc.bulk=0 never to ask)")
        }
    }
}
