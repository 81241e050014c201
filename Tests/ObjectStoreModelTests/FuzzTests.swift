import Foundation
import Testing
@testable import ObjectStoreModel

/// How many cases each fuzz test runs: a few thousand in CI, more on request
/// (`OBJECTSTORE_FUZZ_CASES=1000000 swift test --filter Fuzz`, docs/reliability.md).
enum Fuzz {
    static let cases = ProcessInfo.processInfo.environment["OBJECTSTORE_FUZZ_CASES"].flatMap(Int.init) ?? 3_000
    static let seed = ProcessInfo.processInfo.environment["OBJECTSTORE_FUZZ_SEED"].flatMap(UInt64.init) ?? 20_261_122

    /// Mutates text: deletes, duplicates, swaps or inserts characters from an alphabet.
    static func mutate(_ text: String, _ rng: inout SeededRandom, alphabet: [Character]) -> String {
        var chars = Array(text)
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let position = chars.isEmpty ? 0 : Int.random(in: 0..<chars.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0 where !chars.isEmpty: chars.remove(at: position)
            case 1 where !chars.isEmpty: chars.insert(chars[position], at: position)
            case 2 where chars.count > 1: chars.swapAt(position, Int.random(in: 0..<chars.count, using: &rng))
            default: chars.insert(alphabet.randomElement(using: &rng) ?? " ", at: position)
            }
        }
        return String(chars)
    }
}

@Suite struct FuzzTests {
    static let predicateSeeds = [
        "priority >= 2 AND location.name ==[c] 'home'", "ANY tags.name IN {'a', 'b'} OR NOT (dueDate < now())",
        "SUBQUERY(tasks, $t, $t.priority BETWEEN {1, 3}).@count > 0", "text LIKE[cd] '*milk?' AND -priority ** 2 < 3.5e2",
        "tags[FIRST].name MATCHES '[a-z]+' && SELF != nil || #size == 0x1F", "CAST(123.5, 'NSDate') > dueDate AND $VAR == %@",
    ]
    static let predicateAlphabet = Array("()[]{}'\"$%@#!=<>&|*+-/.,: abcANDORNOT0123456789\\SUBQUERYFIRST")

    @Test func thePredicateParserNeverTrapsOrHangs() {
        var rng = SeededRandom(seed: Fuzz.seed)
        var rejected = 0
        for _ in 0..<Fuzz.cases {
            let seed = Self.predicateSeeds.randomElement(using: &rng) ?? ""
            let text = Fuzz.mutate(seed, &rng, alphabet: Self.predicateAlphabet)
            do {
                let predicate = try ObjectPredicate(format: text, arguments: ["x"])
                // Whatever parses prints to text that parses to the same predicate.
                let again = try ObjectPredicate(predicate.description)
                #expect(again == predicate, "round trip of \(text)")
            } catch {
                rejected += 1
            }
        }
        #expect(rejected > 0 && rejected < Fuzz.cases)
    }

    @Test func randomTokenSoupIsRejectedCleanly() {
        var rng = SeededRandom(seed: Fuzz.seed &+ 1)
        let tokens = ["(", ")", "{", "}", "[", "]", "AND", "OR", "NOT", "ANY", "==", "<", "BETWEEN", "IN", "'s'", "1", "2.5", "$x", "a", "b.c", "@count", ",", "SUBQUERY", "CAST", "now()", "-", "**", "#in", "%@", "%K"]
        for _ in 0..<Fuzz.cases {
            let text = (0..<Int.random(in: 0...12, using: &rng)).map { _ in tokens.randomElement(using: &rng) ?? "" }.joined(separator: " ")
            _ = try? ObjectPredicate(format: text, arguments: ["k", 1])
            _ = try? ObjectExpression(text)
        }
    }

    @Test func theSchemaLoaderNeverTraps() throws {
        var rng = SeededRandom(seed: Fuzz.seed &+ 2)
        let alphabet = Array("{}[]\":,0123456789truefalsnl abcdEType-\\")
        let seeds = [SchemaFixtures.full, try String(contentsOf: SchemaFixtures.modelsDirectory.appendingPathComponent("Tasks/v3.json"), encoding: .utf8)]
        var loaded = 0
        for _ in 0..<max(200, Fuzz.cases / 5) {
            let text = Fuzz.mutate(seeds.randomElement(using: &rng) ?? "", &rng, alphabet: alphabet)
            do {
                _ = try ManagedObjectModel(schema: text)
                loaded += 1
            } catch {
                #expect(!error.diagnostics.isEmpty)
            }
        }
        #expect(loaded > 0)
    }

    @Test func theJSONParserNeverTraps() {
        var rng = SeededRandom(seed: Fuzz.seed &+ 3)
        let alphabet = Array("{}[]\":,0123456789.eE+-truefalsnl \\u\u{00e9}\n")
        for _ in 0..<Fuzz.cases {
            let text = Fuzz.mutate(#"{"a": [1, -2.5e3, true, null, "x\u00e9\n"], "b": {"c": {}}}"#, &rng, alphabet: alphabet)
            _ = try? JSONParser.parse(text)
        }
        // Random bytes, including invalid UTF-8.
        for _ in 0..<Fuzz.cases {
            let bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = try? JSONParser.parse(bytes)
        }
    }

    @Test func isoDatesNeverTrap() {
        var rng = SeededRandom(seed: Fuzz.seed &+ 4)
        for _ in 0..<Fuzz.cases {
            let text = Fuzz.mutate("2026-12-01T14:30:00.123+02:00", &rng, alphabet: Array("0123456789-:TZ+.z "))
            if let date = ISO8601.parse(text) { #expect(ISO8601.parse(ISO8601.format(date)) != nil) }
        }
    }
}
