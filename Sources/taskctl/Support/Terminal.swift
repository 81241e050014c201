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

    init(environment: [String: String]) {
        isTTY = isatty(STDOUT_FILENO) == 1
        useColor = isTTY && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
        var size = winsize()
        if isTTY, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            width = Int(size.ws_col)
        } else if let columns = environment["COLUMNS"].flatMap(Int.init), columns > 20 {
            width = columns
        } else {
            width = 100
        }
    }

    enum Style: String {
        case red = "31", yellow = "33", green = "32", bold = "1", dim = "2", cyan = "36"
    }

    func paint(_ text: String, _ style: Style) -> String {
        useColor ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }
}

/// Output collected by a command, written at the end.
struct Output {
    var out = ""
    var err = ""

    mutating func line(_ text: String = "") { out += text + "\n" }
    mutating func warn(_ text: String) { err += text + "\n" }
}
