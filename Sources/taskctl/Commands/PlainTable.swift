import Foundation

/// The rows of `list`'s plain table (no colour, every cell printable ASCII, no done task),
/// kept compact: per row only what its line and the default order need, the text cells'
/// bytes in one buffer and the other cells as indexes into the distinct texts. A list of
/// 900,000 tasks kept a view of a dozen fields per task, and writing the views in sorted
/// order missed the cache on every field.
struct PlainRows {
    /// The rows' ids, priorities and what else the default order compares.
    private var keys = DefaultOrderKeys()
    private var ids: [Int64] { keys.ids }
    private var priority: [Int64] { keys.priority }
    /// Indexes into `cells`, 0 for an empty cell.
    private var when: [Int32] = []
    private var location: [Int32] = []
    private var project: [Int32] = []
    /// Where each row's text cell (the text, then its tags as `#tag`) ends in `text`.
    private var textEnds: [Int] = []
    private var text: [UInt8] = []
    /// The distinct short cells (due texts, locations, projects), the empty one first.
    private var cells: [String] = [""]
    private var cellIndex: [String: Int32] = ["": 0]
    /// Due dates' cells by ``RelativeDate/key(_:)``, for keys whose text is the same for
    /// every date.
    private var dueCells: [Int64: Int32] = [:]
    private let relative: RelativeDate

    init(relative: RelativeDate) {
        self.relative = relative
    }

    var count: Int { keys.count }

    /// Adds a view's row; false (having added nothing) when the view has no plain row: a
    /// done task (its check mark), or a cell that is not printable ASCII.
    mutating func append(_ view: TaskView) -> Bool {
        guard view.status != "done" else { return false }
        guard let when = dueCell(view.due), let location = cell(view.location ?? ""),
            let project = cell(view.project ?? "")
        else { return false }
        let start = text.count
        var title = view.text
        let printable = title.withUTF8 { bytes in
            text.append(contentsOf: bytes)
            return bytes.allSatisfy(Terminal.isPrintableASCII)
        }
        guard printable, view.tags.allSatisfy({ Self.appendTag($0, to: &text) }) else {
            text.removeSubrange(start...)
            return false
        }
        keys.append(view)
        self.when.append(when)
        self.location.append(location)
        self.project.append(project)
        textEnds.append(text.count)
        return true
    }

    private static func appendTag(_ tag: String, to text: inout [UInt8]) -> Bool {
        var tag = tag
        return tag.withUTF8 { bytes in
            text.append(0x20)
            text.append(UInt8(ascii: "#"))
            text.append(contentsOf: bytes)
            return bytes.allSatisfy(Terminal.isPrintableASCII)
        }
    }

    /// The index of a due date's cell, found by the date's quarter hour when a date of the
    /// same quarter hour had it (its text neither made nor hashed again: a fortieth of
    /// `list`).
    private mutating func dueCell(_ due: Date?) -> Int32? {
        guard let due else { return 0 }
        if let known = dueCells[relative.key(due)] { return known }
        let (text, key) = relative.describeKeyed(due)
        guard let index = cell(text) else { return nil }
        if let key { dueCells[key] = index }
        return index
    }

    /// The index of a short cell, nil when it is not printable ASCII.
    private mutating func cell(_ value: String) -> Int32? {
        if let known = cellIndex[value] { return known }
        guard Terminal.printableASCIIWidth(value) != nil else { return nil }
        let index = Int32(cells.count)
        cells.append(value)
        cellIndex[value] = index
        return index
    }

    /// The rows in the default order.
    func defaultOrder() -> [Int] { keys.order() }

    /// Writes the table of the rows at `order`'s positions, in that order: the lines
    /// ``Table`` makes for them when nothing has to be cut, dropped or shown otherwise. False,
    /// having written nothing, when the columns do not fit the terminal's width.
    func write(_ order: [Int], app: App) throws -> Bool {
        guard !order.isEmpty else { return false }
        let showProject = order.contains { project[$0] != 0 }
        var headers = ["ID", "Pri", "Due", "Location"]
        if showProject { headers.append("Project") }
        headers.append("Text")
        let textColumn = headers.count - 1
        var widths = headers.map(\.utf8.count)
        let cellWidths = cells.map(\.utf8.count)
        for row in order {
            widths[0] = max(widths[0], Self.digits(ids[row]))
            if priority[row] >= 1 { widths[1] = max(widths[1], 1) }
            widths[2] = max(widths[2], cellWidths[Int(when[row])])
            widths[3] = max(widths[3], cellWidths[Int(location[row])])
            if showProject { widths[4] = max(widths[4], cellWidths[Int(project[row])]) }
            widths[textColumn] = max(widths[textColumn], textEnds[row] - (row == 0 ? 0 : textEnds[row - 1]))
        }
        // The table's sizing: the text column takes at least 10 characters; everything must fit.
        let fixed = widths.dropLast().reduce(0, +) + 2 * (headers.count - 1)
        widths[textColumn] = max(10, widths[textColumn])
        guard fixed + widths[textColumn] <= app.terminal.width else { return false }

        // The short cells' bytes one after another, then the priority letters, then the headers.
        var cellBytes: [UInt8] = []
        var cellStarts: [Int] = []
        for cell in cells + ["L", "M", "H"] + headers {
            cellStarts.append(cellBytes.count)
            cellBytes.append(contentsOf: cell.utf8)
        }
        cellStarts.append(cellBytes.count)
        let letter = cells.count - 1  // letter + priority is the letter's cell
        let header = cells.count + 3  // header + column is the column's header
        // Written a chunk at a time from one buffer, so the output takes no memory of its own.
        let chunk = 1 << 16
        let capacity = chunk + fixed + widths[textColumn] + 1
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        let end = try text.withUnsafeBufferPointer { textBytes in
            try cellBytes.withUnsafeBufferPointer { cellBytes in
                // The line being written and where it ends, a value of this closure's: a
                // variable the nested functions captured was checked for exclusive access at
                // each use (a twentieth of `list`).
                var line = LineBuffer(buffer: buffer)
                /// A short cell padded to `width`, after the two spaces between columns.
                func cell(_ index: Int, width: Int, first: Bool = false, into line: inout LineBuffer) {
                    if !first { line.spaces(2) }
                    let start = cellStarts[index], end = cellStarts[index + 1]
                    line.put(cellBytes, from: start, to: end)
                    line.spaces(width - (end - start))
                }
                // The header line (the plain table has no colour, so no bold either).
                cell(header, width: widths[0], first: true, into: &line)
                for column in 1..<headers.count { cell(header + column, width: column == textColumn ? 0 : widths[column], into: &line) }
                line.endLine(startingAt: 0)
                for row in order {
                    let lineStart = line.position
                    // ID, right after the line's start
                    var value = ids[row]
                    let length = Self.digits(value)
                    if value < 0 { buffer[line.position] = UInt8(ascii: "-") }
                    var index = line.position + length - 1
                    repeat {
                        buffer[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: abs(value % 10))
                        value /= 10
                        index -= 1
                    } while value != 0
                    line.position += length
                    line.spaces(widths[0] - length)
                    let priority = self.priority[row]
                    if priority >= 1 { cell(letter + Int(min(3, priority)), width: widths[1], into: &line) } else { cell(0, width: widths[1], into: &line) }
                    cell(Int(when[row]), width: widths[2], into: &line)
                    cell(Int(location[row]), width: widths[3], into: &line)
                    if showProject { cell(Int(project[row]), width: widths[4], into: &line) }
                    line.spaces(2)
                    line.put(textBytes, from: row == 0 ? 0 : textEnds[row - 1], to: textEnds[row])
                    line.endLine(startingAt: lineStart)
                    if line.position >= chunk {
                        try app.output.write(utf8: UnsafeBufferPointer(start: buffer, count: line.position))
                        line.position = 0
                    }
                }
                return line.position
            }
        }
        try app.output.write(utf8: UnsafeBufferPointer(start: buffer, count: end))
        return true
    }

    /// Bytes written into a buffer large enough for a chunk and one more line.
    private struct LineBuffer {
        let buffer: UnsafeMutablePointer<UInt8>
        var position = 0

        mutating func put(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) {
            guard end > start, let base = bytes.baseAddress else { return }
            (buffer + position).update(from: base + start, count: end - start)
            position += end - start
        }

        mutating func spaces(_ count: Int) {
            guard count > 0 else { return }
            (buffer + position).update(repeating: 0x20, count: count)
            position += count
        }

        /// Ends the line that began at `lineStart`: trailing spaces go (an empty last cell,
        /// or padding before the line's end).
        mutating func endLine(startingAt lineStart: Int) {
            while position > lineStart && buffer[position - 1] == 0x20 { position -= 1 }
            buffer[position] = 0x0A
            position += 1
        }
    }

    private static func digits(_ value: Int64) -> Int {
        var value = value, count = value < 0 ? 2 : 1
        while value >= 10 || value <= -10 {
            value /= 10
            count += 1
        }
        return count
    }
}

/// What the default order of tasks compares, per task: most urgent first, then due soonest
/// (no due date last), priority high first, id. Plain arrays: a list of 900,000 tasks kept
/// them as optional values, twice the bytes.
struct DefaultOrderKeys {
    private(set) var ids: [Int64] = []
    private(set) var priority: [Int64] = []
    private var urgency: [Double] = []
    /// Seconds since the reference date; infinity for none.
    private var due: [Double] = []

    init() {}

    init(_ views: [TaskView]) {
        ids.reserveCapacity(views.count)
        priority.reserveCapacity(views.count)
        urgency.reserveCapacity(views.count)
        due.reserveCapacity(views.count)
        for view in views { append(view) }
    }

    var count: Int { ids.count }

    mutating func append(_ view: TaskView) {
        ids.append(view.id)
        priority.append(view.priority)
        urgency.append(view.urgency)
        due.append(view.due?.timeIntervalSinceReferenceDate ?? .infinity)
    }

    /// The positions of the tasks in the default order.
    func order() -> [Int] {
        Array(ids.indices).sorted { i, j in
            if urgency[i] != urgency[j] { return urgency[i] > urgency[j] }
            if due[i] != due[j] { return due[i] < due[j] }
            if priority[i] != priority[j] { return priority[i] > priority[j] }
            return ids[i] < ids[j]
        }
    }
}
