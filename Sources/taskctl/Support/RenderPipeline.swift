import Dispatch

/// Lines of many items (tasks' views), rendered on a second thread while this one reads the
/// next batch from the store, and given to `write` in order: `export` and `list --json` of a
/// large store use both cores. Reading needs the context, which belongs to this thread;
/// rendering needs only the items, which are handed over whole and not touched here again
/// until rendered.
///
/// With a single batch nothing is handed over, so a command on a small store starts no
/// thread. The lines are the same either way (`theThreadedPipelineWritesWhatTheSerialOneDoes`).
final class RenderPipeline<Item> {
    private let render: @Sendable (Item) -> String
    private let write: (String) throws -> Void
    private let threaded: Bool
    private var inFlight: (done: DispatchGroup, batch: Batch)?

    /// Items handed to the rendering thread, and their lines once rendered; read here only
    /// after `done` says the thread has finished with them.
    private final class Batch: @unchecked Sendable {
        let items: [Item]
        var lines: [String] = []
        init(_ items: [Item]) { self.items = items }
    }

    /// `threaded`: render on a second thread (for more than one batch); `write` takes each
    /// line, in the order the items were added.
    init(threaded: Bool, render: @escaping @Sendable (Item) -> String, write: @escaping (String) throws -> Void) {
        self.threaded = threaded
        self.render = render
        self.write = write
    }

    /// Renders a batch (on the second thread when threaded) and writes the batch before it.
    func add(_ items: [Item]) throws {
        let batch = Batch(items)
        guard threaded else {
            batch.lines = items.map(render)
            try emit(batch)
            return
        }
        let done = DispatchGroup()
        let render = self.render
        DispatchQueue.global().async(group: done) { batch.lines = batch.items.map(render) }
        try finish()
        inFlight = (done, batch)
    }

    /// Waits for the batch being rendered and writes it.
    func finish() throws {
        guard let (done, batch) = inFlight else { return }
        inFlight = nil
        done.wait()
        try emit(batch)
    }

    private func emit(_ batch: Batch) throws {
        for line in batch.lines { try write(line) }
    }
}
