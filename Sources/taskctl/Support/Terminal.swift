import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where output goes and how it may look: colour only on a terminal without NO_COLOR, and
/// the terminal's width for tables.
struct Terminal {
    let isTTY: Bool
    let useColor: Bool
    let width: Int
    /// Its rows (a report's `limit:page`): the terminal's, else `LINES`, else 24 as
    /// Taskwarrior's `defaultheight`.
    let height: Int

    /// `color`: `auto` (colour on a terminal unless a non-empty `NO_COLOR` is set or
    /// `TERM=dumb`), `always` or `never`.
    init(environment: [String: String], color: String = "auto") {
        isTTY = isatty(STDOUT_FILENO) == 1
        switch color {
        case "always": useColor = true
        case "never": useColor = false
        default: useColor = isTTY && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
        }
        var size = winsize()
        if isTTY, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            width = Int(size.ws_col)
        } else if let columns = environment["COLUMNS"].flatMap(Int.init), columns > 20 {
            width = columns
        } else {
            // Piped: no line is cut (grep must see the whole text).
            width = isTTY ? 100 : Int.max / 4
        }
        if isTTY, size.ws_row > 0 {
            height = Int(size.ws_row)
        } else if let lines = environment["LINES"].flatMap(Int.init), lines > 5 {
            height = lines
        } else {
            height = 24
        }
    }

    enum Style: String {
        case red = "31", yellow = "33", green = "32", bold = "1", dim = "2", cyan = "36"
    }

    func paint(_ text: String, _ style: Style) -> String {
        useColor ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }
}

extension Terminal {
    /// The width of text made only of printable ASCII (its byte count), nil for other text.
    static func printableASCIIWidth(_ text: String) -> Int? {
        var text = text
        return text.withUTF8 { bytes in bytes.allSatisfy(isPrintableASCII) ? bytes.count : nil }
    }

    /// Whether a byte is printable ASCII (a space to a tilde).
    static func isPrintableASCII(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F }

    /// Text with its control characters shown, not obeyed: C0 controls and DEL in caret
    /// notation (`^[`, `^M`, `^J`), C1 controls as `<U+009B>`. Task text from an import can
    /// hold escape sequences that would recolour, move the cursor or hide lines.
    static func visible(_ text: String, keepingNewlines: Bool = false, keepingStyles: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            let scalar = scalars[i]
            if keepingStyles, scalar == "\u{1B}", let end = styleEnd(scalars, from: i) {
                result.append(contentsOf: scalars[i...end])
                i = end + 1
                continue
            }
            if !isControl(scalar) || (keepingNewlines && scalar == "\n") {
                result.append(scalar)
            } else if scalar.value < 0x20 || scalar.value == 0x7F {
                result.append("^")
                result.append(Unicode.Scalar(UInt8(scalar.value == 0x7F ? 0x3F : scalar.value + 0x40)))
            } else {
                result.append(contentsOf: "<U+\(String(format: "%04X", scalar.value))>".unicodeScalars)
            }
            i += 1
        }
        return String(result)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The end of one of ``paint(_:_:)``'s own sequences (`ESC [ digits m`) starting at `start`.
    private static func styleEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        guard start + 2 < scalars.count, scalars[start + 1] == "[" else { return nil }
        var i = start + 2
        while i < scalars.count, ("0"..."9").contains(scalars[i]) { i += 1 }
        guard i < scalars.count, i > start + 2, scalars[i] == "m" else { return nil }
        let code = String(String.UnicodeScalarView(scalars[(start + 2)..<i]))
        return code == "0" || Style(rawValue: code) != nil ? i : nil
    }
}

/// Output collected by a command, written at the end. On a terminal, control characters
/// in it (from task text, say) are shown rather than obeyed; the line breaks and colours
/// taskctl itself writes are kept. Piped output keeps the data as it is.
struct Output {
    var out = ""
    var err = ""
    var sanitizes = false
    /// Whether taskctl paints (so its own colour sequences are kept).
    var keepsStyles = false

    mutating func line(_ text: String = "") {
        out += sanitizes ? Terminal.visible(text, keepingNewlines: true, keepingStyles: keepsStyles) : text
        out += "\n"
    }
    mutating func warn(_ text: String) { err += text + "\n" }

    /// A line given as UTF-8 bytes (a table row): appended as it is when not sanitizing.
    mutating func line(bytes: UnsafeBufferPointer<UInt8>) {
        let text = String(decoding: bytes, as: UTF8.self)
        line(text)
    }

    /// Whether ``write(utf8:)`` writes to the standard output at once (taskctl's process)
    /// rather than collecting (a command run in a test).
    var writesThrough = false

    /// Lines given as UTF-8 bytes, each ending in a line break, written to the standard
    /// output now, after what was collected before them (a long table's rows, without a
    /// string made of them): only for printable text, such as a plain table's rows.
    mutating func write(utf8 bytes: UnsafeBufferPointer<UInt8>) throws {
        guard writesThrough else {
            out += String(decoding: bytes, as: UTF8.self)
            return
        }
        if !out.isEmpty {
            if let failed = Output.write(out, to: STDOUT_FILENO) { throw CLIError.store("cannot write the output: \(failed)") }
            out = ""
        }
        if let failed = Output.write(bytes, to: STDOUT_FILENO) { throw CLIError.store("cannot write the output: \(failed)") }
    }

    /// Writes what was collected once it passes `bytes` (a streamed export: its text never
    /// all in memory at once); the rest goes at the command's end as usual.
    mutating func flush(above bytes: Int) throws {
        guard out.utf8.count > bytes else { return }
        if let failed = Output.write(out, to: STDOUT_FILENO) { throw CLIError.store("cannot write the output: \(failed)") }
        out = ""
    }

    /// Room for about this many lines of this width, so a long listing grows its output once.
    mutating func reserve(lines: Int, width: Int) {
        out.reserveCapacity(out.utf8.count + lines * (width + 1))
    }

    /// Writes text to a file descriptor from the string's own bytes (a list of 100,000
    /// tasks is 10 MB: copying it into `Data` first cost as much again in fresh memory).
    /// The error when not everything could be written (a full disk, a closed pipe).
    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> String? {
        var text = text
        return text.withUTF8 { write($0, to: descriptor) }
    }

    /// Writes bytes to a file descriptor; the error when not everything could be written.
    @discardableResult
    static func write(_ buffer: UnsafeBufferPointer<UInt8>, to descriptor: Int32) -> String? {
        guard let base = buffer.baseAddress else { return nil }
        var offset = 0
        while offset < buffer.count {
            let written = systemWrite(descriptor, base + offset, buffer.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return written < 0 ? String(cString: strerror(errno)) : "nothing written" }
            offset += written
        }
        return nil
    }
}

/// The C library's `write(2)` (inside `Output`, `write` names its own method).
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
