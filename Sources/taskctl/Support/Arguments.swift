/// The words after the command: options (`--priority high`, `--priority=high`), flags
/// (`--json`) and positional words. Options are known per command so values are never
/// mistaken for flags.
struct Arguments {
    private(set) var positional: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// Parses `words`; `valued` options take a value, `switches` are flags.
    init(_ words: [String], valued: Set<String>, switches: Set<String>, command: String) throws {
        var i = 0
        var onlyPositional = false
        while i < words.count {
            let word = words[i]
            i += 1
            if onlyPositional || !word.hasPrefix("--") || word == "--" {
                if word == "--" && !onlyPositional { onlyPositional = true; continue }
                positional.append(word)
                continue
            }
            var name = String(word.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valued.contains(name) {
                if let inline {
                    values[name] = inline
                } else {
                    guard i < words.count else { throw CLIError.usage("--\(name) needs a value (see taskctl help \(command))") }
                    values[name] = words[i]
                    i += 1
                }
            } else if switches.contains(name) {
                guard inline == nil else { throw CLIError.usage("--\(name) takes no value") }
                flags.insert(name)
            } else {
                let known = (valued.map { "--" + $0 } + switches.map { "--" + $0 }).sorted()
                let hint = NameHint.closest(to: "--" + name, in: known).map { " (did you mean \($0)?)" } ?? ""
                throw CLIError.usage("unknown option --\(name) for '\(command)'\(hint); see taskctl help \(command)")
            }
        }
    }

    func value(_ name: String) -> String? { values[name] }
    func has(_ name: String) -> Bool { flags.contains(name) || values[name] != nil }
}

import ObjectStoreModel

/// "Did you mean" for command-line words.
enum NameHint {
    static func closest(to word: String, in candidates: [String]) -> String? {
        NameSuggestion.closest(to: word, in: candidates)
    }
}
