import Foundation
import Testing
@testable import ObjectStoreModel

@Suite struct PredicateParserTests {
    private func parse(_ text: String) throws -> ObjectPredicate { try ObjectPredicate(text) }
    private func key(_ path: String) -> ObjectExpression { .keyPath(.evaluatedObject, path.split(separator: ".").map(String.init)) }
    private func cmp(_ l: ObjectExpression, _ op: PredicateComparison.Operator, _ r: ObjectExpression, _ q: PredicateComparison.Quantifier = .direct, _ o: PredicateComparison.Options = []) -> ObjectPredicate {
        .comparison(PredicateComparison(l, op, r, quantifier: q, options: o))
    }

    @Test(arguments: [
        ("a == 1", PredicateComparison.Operator.equal), ("a = 1", .equal), ("a != 1", .notEqual), ("a <> 1", .notEqual),
        ("a < 1", .less), ("a <= 1", .lessOrEqual), ("a =< 1", .lessOrEqual), ("a > 1", .greater), ("a >= 1", .greaterOrEqual),
        ("a => 1", .greaterOrEqual), ("a in 1", .in), ("a CONTAINS 1", .contains), ("a beginswith 1", .beginsWith),
        ("a ENDSWITH 1", .endsWith), ("a LIKE 1", .like), ("a matches 1", .matches),
    ])
    func everyComparisonOperator(text: String, op: PredicateComparison.Operator) throws {
        #expect(try parse(text) == cmp(key("a"), op, .constant(1)))
    }

    /// A list stands for `%@` or a `$VARIABLE` as the constant list of its values, and
    /// prints and parses back as one; a specifier that takes one value refuses a list.
    @Test func aListArgumentIsAConstantList() throws {
        let bound = try ObjectPredicate(format: "name IN %@ AND priority >= %d", placeholders: [.list([.string("a"), .string("b")]), .value(.integer(2))])
        #expect(bound == (try ObjectPredicate("name IN {'a', 'b'} AND priority >= 2")))
        #expect(try ObjectPredicate(bound.description) == bound)
        #expect(throws: PredicateSyntaxError.self) { try ObjectPredicate(format: "%K == 1", placeholders: [.list([.string("name")])]) }
        #expect(throws: PredicateSyntaxError.self) { try ObjectPredicate(format: "priority > %d", placeholders: [.list([.integer(1)])]) }
        let template = try ObjectPredicate("ANY tags.name IN $NAMES AND priority < $TOP")
        #expect(try template.substituting(placeholders: ["NAMES": .list([.string("x")]), "TOP": .value(.integer(3))])
                == (try ObjectPredicate("ANY tags.name IN {'x'} AND priority < 3")))
        #expect(throws: PredicateVariableError.self) { try template.substituting(placeholders: ["NAMES": .list([])]) }
    }

    @Test func betweenTakesTwoBounds() throws {
        #expect(try parse("priority BETWEEN {1, 3}") == cmp(key("priority"), .between, .array([.constant(1), .constant(3)])))
    }

    @Test func stringOptions() throws {
        #expect(try parse("name ==[c] 'home'") == cmp(key("name"), .equal, .constant("home"), .direct, [.caseInsensitive]))
        #expect(try parse("name CONTAINS[cd] 'e'") == cmp(key("name"), .contains, .constant("e"), .direct, [.caseInsensitive, .diacriticInsensitive]))
        #expect(try parse("name LIKE[n] 'e'") == cmp(key("name"), .like, .constant("e"), .direct, [.normalized]))
    }

    @Test func notBindsTighterThanAndWhichBindsTighterThanOr() throws {
        let a = cmp(key("a"), .equal, .constant(1)), b = cmp(key("b"), .equal, .constant(2)), c = cmp(key("c"), .equal, .constant(3))
        #expect(try parse("a == 1 OR b == 2 AND c == 3") == .or(a, .and(b, c)))
        #expect(try parse("a == 1 AND b == 2 OR c == 3") == .or(.and(a, b), c))
        #expect(try parse("NOT a == 1 AND b == 2") == .and(.not(a), b))
        #expect(try parse("!(a == 1 || b == 2) && c == 3") == .and(.not(.or(a, b)), c))
        #expect(try parse("(a == 1 OR b == 2) AND c == 3") == .and(.or(a, b), c))
        #expect(try parse("TRUEPREDICATE AND NOT FALSEPREDICATE") == .and(.constant(true), .not(.constant(false))))
    }

    @Test func aggregatesAndKeyPaths() throws {
        #expect(try parse("ANY tasks.priority == 3") == cmp(key("tasks.priority"), .equal, .constant(3), .any))
        #expect(try parse("SOME tasks.priority == 3") == cmp(key("tasks.priority"), .equal, .constant(3), .any))
        #expect(try parse("ALL tasks.priority > 0") == cmp(key("tasks.priority"), .greater, .constant(0), .all))
        #expect(try parse("NONE tasks.text == 'x'") == cmp(key("tasks.text"), .equal, .constant("x"), .none))
        #expect(try parse("tasks.@count > 2") == cmp(.keyPath(.evaluatedObject, ["tasks", "@count"]), .greater, .constant(2)))
        #expect(try parse("@sum.priority > 2") == cmp(.keyPath(.evaluatedObject, ["@sum", "priority"]), .greater, .constant(2)))
        #expect(try parse("SELF == $x") == cmp(.evaluatedObject, .equal, .variable("x")))
        #expect(try parse("SELF.text == 'a'") == cmp(.keyPath(.evaluatedObject, ["text"]), .equal, .constant("a")))
        #expect(try parse("#size == 1 AND a.#in == 2") == .and(cmp(key("size"), .equal, .constant(1)), cmp(key("a.in"), .equal, .constant(2))))
        #expect(try parse("$loc.name == 'x'") == cmp(.keyPath(.variable("loc"), ["name"]), .equal, .constant("x")))
    }

    @Test func literals() throws {
        func rhs(_ text: String) throws -> ObjectExpression {
            guard case .comparison(let c) = try parse("a == " + text) else { throw PredicateVariableError(name: "", known: []) }
            return c.rhs
        }
        #expect(try rhs("'single'") == .constant("single"))
        #expect(try rhs("\"double \\\"q\\\" \\n\"") == .constant("double \"q\" \n"))
        #expect(try rhs("'a\\u00e9'") == .constant("aé"))
        #expect(try rhs("42") == .constant(42))
        #expect(try rhs("-42") == .constant(-42))
        #expect(try rhs("0x1F") == .constant(31))
        #expect(try rhs("0o17") == .constant(15))
        #expect(try rhs("017") == .constant(15))
        #expect(try rhs("0b101") == .constant(5))
        #expect(try rhs("2.5") == .constant(2.5))
        #expect(try rhs("1e3") == .constant(1000.0))
        #expect(try rhs("99999999999999999999") == .constant(.decimal(Decimal(string: "99999999999999999999")!)))
        for t in ["TRUE", "yes", "True"] { #expect(try rhs(t) == .constant(true)) }
        for f in ["FALSE", "no"] { #expect(try rhs(f) == .constant(false)) }
        for n in ["NULL", "nil", "Nil"] { #expect(try rhs(n) == .constant(.null)) }
        #expect(try rhs("{1, 'b', nil}") == .array([.constant(1), .constant("b"), .constant(.null)]))
        #expect(try rhs("{}") == .array([]))
    }

    @Test func expressions() throws {
        guard case .comparison(let c) = try parse("a + b * 2 ** 3 ** 2 - -c / 4 > 0") else { Issue.record(); return }
        // ** is right-associative and binds tighter than * and /.
        let power = ObjectExpression.arithmetic(.power, .constant(2), .arithmetic(.power, .constant(3), .constant(2)))
        let product = ObjectExpression.arithmetic(.multiply, key("b"), power)
        let quotient = ObjectExpression.arithmetic(.divide, .negate(key("c")), .constant(4))
        #expect(c.lhs == .arithmetic(.subtract, .arithmetic(.add, key("a"), product), quotient))
        #expect(try parse("(a + 1) * 2 == 4") == cmp(.arithmetic(.multiply, .arithmetic(.add, key("a"), .constant(1)), .constant(2)), .equal, .constant(4)))
        #expect(try parse("now() > dueDate") == cmp(.function("now", []), .greater, key("dueDate")))
        #expect(try parse("abs(-3) == 3") == cmp(.function("abs", [.constant(-3)]), .equal, .constant(3)))
        #expect(try parse("tags[FIRST].name == 'x'") == cmp(.keyPath(.index(key("tags"), .first), ["name"]), .equal, .constant("x")))
        #expect(try parse("tags[SIZE] == 2") == cmp(.index(key("tags"), .size), .equal, .constant(2)))
        #expect(try parse("tags[LAST] == nil AND tags[1] == nil") == .and(cmp(.index(key("tags"), .last), .equal, .constant(.null)), cmp(.index(key("tags"), .expression(.constant(1))), .equal, .constant(.null))))
        #expect(try parse("SUBQUERY(tasks, $t, $t.priority == 3).@count > 0") == cmp(
            .keyPath(.subquery(key("tasks"), variable: "t", cmp(.keyPath(.variable("t"), ["priority"]), .equal, .constant(3))), ["@count"]), .greater, .constant(0)))
        #expect(try parse("dueDate < CAST(0, 'NSDate')") == cmp(key("dueDate"), .less, .constant(.date(Date(timeIntervalSinceReferenceDate: 0)))))
        #expect(try parse("dueDate < CAST(x, 'NSDate')") == cmp(key("dueDate"), .less, .cast(key("x"), "NSDate")))
    }

    @Test func variablesAreSubstitutedAndMissingOnesNamed() throws {
        let predicate = try parse("dueDate < $DUE AND priority == $P")
        #expect(predicate.variableNames == ["DUE", "P"])
        let bound = try predicate.substituting(["DUE": .date(Date(timeIntervalSince1970: 0)), "P": 3])
        #expect(bound.variableNames.isEmpty)
        #expect {
            try predicate.substituting(["DUE": 1])
        } throws: { error in
            (error as? PredicateVariableError)?.description == "no value for the variable $P (given: $DUE)"
        }
        // SUBQUERY's own variable is not a free variable.
        #expect(try parse("SUBQUERY(tasks, $t, $t.priority == $P).@count > 0").variableNames == ["P"])
    }

    @Test func formatArguments() throws {
        let predicate = try ObjectPredicate(format: "%K == %@ AND priority >= %d AND ratio < %f", "location.name", "home", 2, 0.5)
        #expect(predicate == .and(.and(
            cmp(key("location.name"), .equal, .constant("home")), cmp(key("priority"), .greaterOrEqual, .constant(2))),
            cmp(key("ratio"), .less, .constant(0.5))))
        #expect(throws: PredicateSyntaxError.self) { try ObjectPredicate(format: "a == %@") }
        #expect(throws: PredicateSyntaxError.self) { try ObjectPredicate(format: "%K == 1", 3) }
        #expect(throws: PredicateSyntaxError.self) { try ObjectPredicate(format: "a == %d", "x") }
    }

    @Test(arguments: [
        ("", 1, "expected a predicate, found nothing"),
        ("priority >=", 12, "expected an expression after '>='"),
        ("priority", 9, "expected a comparison operator"),
        ("priority == 1 AND", 18, "expected an expression, found the end of the predicate"),
        ("priority == 1 xyz", 15, "unexpected 'xyz'; expected AND, OR or the end of the predicate"),
        ("(priority == 1", 15, "expected ')' to close the parenthesis, found the end of the predicate"),
        ("a == 'abc", 6, "unterminated string"),
        ("a == 1 & b == 2", 8, "unexpected character '&'"),
        ("a ==[x] 'b'", 6, "unknown comparison option 'x'"),
        ("a <[c] 2", 4, "options [c] apply to string comparisons, not to <"),
        ("a BETWEEN 1", 3, "BETWEEN needs two bounds"),
        ("a == $", 6, "expected a variable name after '$'"),
        ("a == %q", 6, "unknown format specifier"),
        ("a == 0x", 6, "invalid base-16 integer"),
        ("a == 12abc", 6, "invalid number"),
        ("a == foo(1)", 6, "unknown function foo()"),
        ("a == now(1)", 6, "now() takes 0 arguments, got 1"),
        ("a == CAST(1, 'NSWidget')", 14, "CAST to 'NSWidget' is not supported"),
        ("a == CAST('x', 'NSDate')", 16, "cannot CAST \"x\" to NSDate"),
        ("SUBQUERY(tasks, t, t == 1).@count > 0", 17, "expected a $variable"),
        ("a.AND == 1", 3, "'AND' is a keyword; write #AND to use it as a key"),
        ("a == {1, 2", 11, "expected '}' to close the array"),
        ("tags[FIRST == 1", 12, "expected ']' to close the index"),
        ("a == 1 OR", 10, "expected an expression, found the end of the predicate"),
        ("ANY", 4, "expected an expression"),
        ("a == b == c", 8, "unexpected '=='"),
        ("== 1", 1, "expected an expression, found '=='"),
        ("a IN", 5, "expected an expression after 'IN'"),
        ("a == @", 6, "expected a collection operator"),
        ("a == #", 6, "expected a name after '#'"),
        ("NOT", 4, "expected an expression"),
    ])
    func syntaxErrorsNameTheColumnAndWhatWasExpected(text: String, column: Int, message: String) {
        do {
            _ = try ObjectPredicate(text)
            Issue.record("expected \(text) to be rejected")
        } catch {
            #expect(error.column == column, "\(error)")
            #expect(error.message.contains(message), "\(error)")
        }
    }

    @Test func errorDescriptionShowsACaretUnderTheColumn() {
        do {
            _ = try ObjectPredicate("priority >= AND")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "column 13: expected an expression, found the keyword AND; write #AND to use it as a key\n  priority >= AND\n              ^")
        }
    }

    @Test func hostileNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        #expect(throws: PredicateSyntaxError.self) { try ObjectPredicate(deep) }
        let unary = "a == " + String(repeating: "-", count: 10_000) + "1"
        #expect(throws: PredicateSyntaxError.self) { try ObjectPredicate(unary) }
    }

    @Test(arguments: [
        "a == 1 OR b == 2 AND c == 3",
        "(a == 1 OR b == 2) AND c == 3",
        "a == 1 AND (b == 2 AND c == 3)",
        "NOT (a == 1 OR b == 2)",
        "NOT NOT a == 1",
        "ANY tags.name ==[cd] \"x\" AND ALL tasks.priority BETWEEN {1, 3}",
        "NONE tasks.text LIKE[c] \"*a?\\\\*\"",
        "name MATCHES \"[a-z]+\\\\d\" OR name IN {\"a\", \"b\"}",
        "(a + b) * c > -d / (e - 2) ** 2",
        "a - (b - c) == (a - b) - c",
        "SUBQUERY(tasks, $t, $t.priority == 3 AND $t.text CONTAINS \"x\").@count > 0",
        "tasks.@avg.priority >= 2.5 AND @sum.priority < 10",
        "#size == 1 AND #in.#first == 2",
        "dueDate < now() AND dueDate > CAST(812345678.125, \"NSDate\")",
        "estimate == CAST(\"12.50\", \"NSDecimalNumber\") AND id == CAST(\"6BA7B810-9DAD-11D1-80B4-00C04FD430C8\", \"NSUUID\")",
        "TRUEPREDICATE OR FALSEPREDICATE",
        "tags[FIRST].name == nil AND tags[SIZE] == 0 AND tags[2] != nil",
        "text == \"quote \\\" backslash \\\\ newline \\n tab \\t\"",
        "lowercase(text) BEGINSWITH \"a\" AND length(text) <= 5",
        "ratio == 1.0e-05 AND ratio != 3.0 AND count == -7",
        "$x.name == $y",
    ])
    func printingAndParsingAgainGivesTheSamePredicate(text: String) throws {
        let predicate = try ObjectPredicate(text)
        let printed = predicate.description
        let reparsed = try ObjectPredicate(printed)
        #expect(reparsed == predicate, "printed as: \(printed)")
        #expect(reparsed.description == printed)
    }

    @Test func printerParenthesisesWhereItMatters() throws {
        #expect(try ObjectPredicate("a == 1 OR b == 2 AND c == 3").description == "a == 1 OR (b == 2 AND c == 3)")
        #expect(try ObjectPredicate("a=1").description == "a == 1")
        #expect(try ObjectPredicate("name ==[c] 'home'").description == "name ==[c] \"home\"")
    }

    @Test func chainsTooLongToEvaluateSafelyAreRefusedNotOverflowed() throws {
        let long = "priority" + String(repeating: " + 1", count: 10_000) + " > 2"
        let path = "location" + String(repeating: ".tasks.location", count: 2_000) + ".name == 'x'"
        let ands = Array(repeating: "priority == 1", count: 5_000).joined(separator: " AND ")
        let powers = Array(repeating: "2", count: 5_000).joined(separator: " ** ") + " > 1"
        for text in [long, path, ands, powers] {
            #expect {
                _ = try ObjectPredicate(text)
            } throws: { error in
                (error as? PredicateSyntaxError)?.message.contains("too long") == true || (error as? PredicateSyntaxError)?.message.contains("too deeply") == true
            }
        }
        let keyArgument = Array(repeating: "tasks", count: 4_000).joined(separator: ".")
        #expect(throws: PredicateSyntaxError.self) { _ = try ObjectPredicate(format: "%K == 1", .string(keyArgument)) }
        // A predicate a person writes is far from the bound.
        _ = try ObjectPredicate(Array(repeating: "priority == 1", count: 60).joined(separator: " OR "))
    }

    /// A format argument no specifier takes is refused, not dropped: it is a %@ left out of
    /// the text; too few arguments are refused as before.
    @Test func formatArgumentsMustMatchTheirSpecifiers() throws {
        #expect {
            _ = try ObjectPredicate(format: "priority == 2", .integer(3))
        } throws: { error in
            (error as? PredicateSyntaxError)?.message == "1 format argument given, but the predicate uses 0"
        }
        #expect {
            _ = try ObjectPredicate(format: "priority == %@ AND title == %@", .integer(3), .string("x"), .string("extra"))
        } throws: { error in
            (error as? PredicateSyntaxError)?.message == "3 format arguments given, but the predicate uses 2"
        }
        #expect(throws: PredicateSyntaxError.self) { _ = try ObjectPredicate(format: "priority == %@ AND title == %@", .integer(3)) }
        _ = try ObjectPredicate(format: "priority == %@ AND %K == %@", .integer(3), .string("title"), .string("x"))
    }

    /// The constants of an IN list are values, not operators: 300 numbers, 300 UUIDs (as
    /// casts of strings) and 100,000 numbers parse; the list has a bound of its own, and
    /// expressions inside a list still count as operators.
    @Test func listsOfConstantsAreBoundedByTheirOwnSize() throws {
        let numbers = try ObjectPredicate("priority IN {" + (0..<300).map(String.init).joined(separator: ", ") + "}")
        guard case .comparison(let c) = numbers, case .array(let items) = c.rhs else { Issue.record("\(numbers)"); return }
        #expect(items.count == 300)
        let uuids = (0..<300).map { _ in "CAST('\(UUID().uuidString)', 'NSUUID')" }
        _ = try ObjectPredicate(format: "uuid IN {" + uuids.joined(separator: ", ") + "} AND priority IN {-1, 'x', 2.5, %@}", .integer(3))
        _ = try ObjectPredicate("priority IN {" + (0..<100_000).map(String.init).joined(separator: ",") + "}")
        #expect {
            _ = try ObjectPredicate("priority IN {" + (0...100_000).map(String.init).joined(separator: ",") + "}")
        } throws: { error in
            (error as? PredicateSyntaxError)?.message.contains("the list has more than 100000 items") == true
        }
        #expect {
            _ = try ObjectPredicate("priority IN {" + (0..<300).map { "\($0) + 1" }.joined(separator: ", ") + "}")
        } throws: { error in
            (error as? PredicateSyntaxError)?.message.contains("too long") == true
        }
    }
}
