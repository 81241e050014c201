import Foundation
import Synchronization
import Testing
@testable import taskctl

/// `export` and `list --json` of more than a batch render each batch on a second thread
/// while the next is read (``RenderPipeline``); what they write must be what rendering each
/// view in turn on one thread writes.
@Suite(.enabled(if: TaskctlRunner.binary != nil, "needs the built taskctl (swift build)"))
struct RenderPipelineTests {
    /// Tasks with what rendering escapes or reads from elsewhere: quotes, backslashes,
    /// controls, non-ASCII text, annotations, dependencies, fields taskctl keeps as written.
    static func tasks(_ count: Int) -> String {
        var random = SeededRandom(seed: 53)
        let pieces = ["a", "word", "\\\"", "\\\\", "\\n", "\\t", "\\u0001", "é", "😀", " ", "+x", "@y"]
        var tasks: [String] = []
        for i in 0..<count {
            var fields = [#""uuid":"\#(String(format: "%08x-0000-4000-8000-000000000000", i + 1))""#,
                          #""entry":"20261101T0\#(i % 10)0000Z""#,
                          #""description":"T\#(i) \#((0..<Int(random.next() % 8 + 1)).map { _ in random.pick(pieces) }.joined())""#]
            fields.append(#""status":"\#(random.pick(["pending", "pending", "pending", "completed", "deleted", "waiting"]))""#)
            if fields.last?.contains("completed") == true || fields.last?.contains("deleted") == true { fields.append(#""end":"20261110T000000Z""#) }
            if fields.last?.contains("waiting") == true { fields.append(#""wait":"20261201T000000Z""#) }
            if random.chance(50) { fields.append(#""priority":"\#(random.pick(["L", "M", "H"]))""#) }
            if random.chance(60) { fields.append(#""due":"202611\#(10 + random.next() % 20)T1\#(random.next() % 10)0000Z""#) }
            if random.chance(40) { fields.append(#""project":"\#(random.pick(["home", "work.code", "ünï", "p q"]))""#) }
            if random.chance(50) { fields.append(#""tags":["\#(random.pick(["a", "next", "über"]))"]"#) }
            if random.chance(20) { fields.append(#""annotations":[{"entry":"20261102T000000Z","description":"note \"\#(i)\"\n"}]"#) }
            if random.chance(10) { fields.append(#""estimate":\#(random.pick(["5", "\"5h\"", "2.5", "true"]))"#) }
            if random.chance(10) && i > 0 { fields.append(#""depends":"\#(String(format: "%08x-0000-4000-8000-000000000000", Int(random.next() % UInt64(i)) + 1))""#) }
            tasks.append("{" + fields.joined(separator: ",") + "}")
        }
        return "[" + tasks.joined(separator: ",\n") + "]"
    }

    @Test(arguments: ["tasks.store", "tasks.json"])
    func theThreadedPipelineWritesWhatTheSerialOneDoes(storeName: String) throws {
        let t = try TaskctlRunner(storeName: storeName)
        let file = t.directory.appendingPathComponent("tasks.json.import")
        try Data(Self.tasks(300).utf8).write(to: file)
        #expect(try t.ok("import", file.path).contains("300 added"))
        let app = try App(environment: t.environment, storePath: t.store.path)
        let views = try TaskView.fetch(try app.context(readOnly: true), where: nil, app: app)
        #expect(views.count == 300)
        let timeZone = app.timeZone
        let renderers: [(String, @Sendable (TaskView) -> String)] = [
            ("taskctl", { "  " + $0.json }), ("taskwarrior", { TaskwarriorFormat.export($0) }),
            ("todo.txt", { TodoTxtFormat.export($0, timeZone: timeZone) }),
        ]
        for (format, render) in renderers {
            let serial = views.map(render)
            #expect(Set(serial).count == 300, "\(format): every task its own line")
            for size in [1, 2, 7, 64, 299, 300, 301] {
                var lines: [String] = []
                let pipeline = RenderPipeline(threaded: true, render: render) { lines.append($0) }
                for start in stride(from: 0, to: views.count, by: size) { try pipeline.add(Array(views[start..<min(start + size, views.count)])) }
                try pipeline.finish()
                let differs = zip(lines, serial).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                #expect(lines.count == serial.count && differs == nil,
                        "\(format) in batches of \(size): \(lines.count) lines of \(serial.count), the first differing: \(differs.map(String.init) ?? "none")")
            }
        }
        // Where the rendering runs: threaded, never on the caller's thread; not threaded (a
        // single batch), always there, so a small command starts no thread.
        let threads = Mutex<Set<UInt>>([])
        let caller = UInt(pthread_self())
        for threaded in [true, false] {
            threads.withLock { $0 = [] }
            let pipeline = RenderPipeline<TaskView>(threaded: threaded, render: { view in
                threads.withLock { _ = $0.insert(UInt(pthread_self())) }
                return view.json
            }) { _ in }
            for start in stride(from: 0, to: views.count, by: 50) { try pipeline.add(Array(views[start..<start + 50])) }
            try pipeline.finish()
            #expect(threads.withLock { threaded ? !$0.contains(caller) : $0 == [caller] }, "threaded: \(threaded)")
        }
    }
}
