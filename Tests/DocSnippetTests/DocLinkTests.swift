import Foundation
import Testing

/// The links between the project's own pages: README.md, CHANGELOG.md, docs/*.md and the DocC
/// articles. A relative link names a file that exists, and a `#fragment` names a heading of
/// that file (GitHub's anchors: lower case, punctuation other than `-` and `_` left out, spaces
/// as `-`). The changelog's entries are judged by the page they link, so a renamed page or
/// heading must not leave them pointing nowhere.
@Suite struct DocLinkTests {
    static let repository = SnippetEnvironment.repository

    /// GitHub's anchor for a heading's text.
    static func anchor(_ heading: String) -> String {
        var result = ""
        for character in heading.lowercased() {
            if character == " " { result.append("-") }
            else if character == "-" || character == "_" || character.isLetter || character.isNumber { result.append(character) }
        }
        return result
    }

    /// The anchors of a Markdown file's headings (outside code blocks).
    static func anchors(of text: String) -> Set<String> {
        var result: Set<String> = []
        var inCode = false
        for line in text.components(separatedBy: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") { inCode.toggle(); continue }
            guard !inCode, line.hasPrefix("#") else { continue }
            let text = line.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces)
            result.insert(anchor(text))
        }
        return result
    }

    /// The targets of `[text](target)` links in a Markdown text, outside code blocks and code voice.
    static func links(in text: String) -> [(line: Int, target: String)] {
        var result: [(Int, String)] = []
        var inCode = false
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") { inCode.toggle(); continue }
            if inCode { continue }
            // Leave code voice out: `[x](y)` there is not a link.
            let parts = line.components(separatedBy: "`")
            for (partIndex, part) in parts.enumerated() where partIndex % 2 == 0 {
                var rest = Substring(part)
                while let open = rest.range(of: "](") {
                    let after = rest[open.upperBound...]
                    guard let close = after.firstIndex(of: ")") else { break }
                    result.append((index + 1, String(after[..<close])))
                    rest = after[after.index(after: close)...]
                }
            }
        }
        return result
    }

    @Test func anchorsAreGitHubs() {
        #expect(Self.anchor("Taskwarrior's command language") == "taskwarriors-command-language")
        #expect(Self.anchor("Header (128 bytes)") == "header-128-bytes")
        #expect(Self.anchor("taskctl and Taskwarrior 2.6") == "taskctl-and-taskwarrior-26")
        #expect(Self.anchor("Held-out defects, round 4") == "held-out-defects-round-4")
    }

    @Test func everyRelativeLinkReachesAFileAndAHeading() throws {
        var broken: [String] = []
        var checked = 0
        for page in try SnippetEnvironment.pages(extra: ["CHANGELOG.md"]) {
            let url = Self.repository.appendingPathComponent(page)
            let text = try String(contentsOf: url, encoding: .utf8)
            for (line, target) in Self.links(in: text) {
                if target.contains("://") || target.hasPrefix("mailto:") || target.hasPrefix("doc:") || target.isEmpty { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(parts[0])
                let destination = path.isEmpty ? url : url.deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
                checked += 1
                guard FileManager.default.fileExists(atPath: destination.path) else {
                    broken.append("\(page):\(line): \(target): no such file")
                    continue
                }
                if parts.count == 2 {
                    let fragment = String(parts[1])
                    let anchors = Self.anchors(of: (try? String(contentsOf: destination, encoding: .utf8)) ?? "")
                    if !anchors.contains(fragment) { broken.append("\(page):\(line): \(target): no heading with that anchor") }
                }
            }
        }
        #expect(checked > 100, "the pages' links were found (\(checked))")
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    /// CHANGELOG.md's sections (Unreleased, when changes since the newest release are
    /// listed, then the releases, each with its date): in the unreleased one and the newest
    /// release, one line per entry, each linking the page that explains it.
    @Test func theNewestReleaseHasOneLineEntriesThatLinkTheirPage() throws {
        let text = try String(contentsOf: Self.repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let sections = lines.indices.filter { lines[$0].hasPrefix("## ") }
        guard let first = sections.first else {
            Issue.record("CHANGELOG.md has no release")
            return
        }
        let checked = lines[first] == "## Unreleased" ? Array(sections.prefix(2)) : [first]
        guard let release = checked.last, lines[release] != "## Unreleased" else {
            Issue.record("CHANGELOG.md has no release after Unreleased")
            return
        }
        #expect(lines[release].range(of: #"^## \d+\.\d+\.\d+ \(\d{4}-\d{2}-\d{2}\)$"#, options: .regularExpression) != nil,
                "the newest release has its version and date: \(lines[release])")
        for start in checked {
            let end = lines[(start + 1)...].firstIndex(where: { $0.hasPrefix("## ") }) ?? lines.count
            var entries = 0
            for index in (start + 1)..<end {
                let line = lines[index]
                if line.hasPrefix("- ") {
                    entries += 1
                    #expect(line.contains("]("), "CHANGELOG.md:\(index + 1) links no page")
                } else if line.hasPrefix("  ") {
                    Issue.record("CHANGELOG.md:\(index + 1): an entry continues on a second line")
                }
            }
            #expect(entries > 0, "\(lines[start]) lists no change")
        }
    }
}
