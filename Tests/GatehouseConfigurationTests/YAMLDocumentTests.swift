import GatehouseConfiguration
import GatehouseCore
import Testing

struct YAMLDocumentTests {
    @Test func emptyTextIsAnEmptyMapping() throws {
        for text in ["", "# only a comment\n", "---\n"] {
            let document = try YAMLDocument(text: text, file: "empty.yaml")
            guard case .mapping(let entries) = document.root.value else {
                Issue.record("not a mapping for \(text.debugDescription)")
                continue
            }
            #expect(entries.isEmpty)
            #expect(document.root.line == 1)
        }
    }

    @Test func everyNodeAndKeyKnowsItsLine() throws {
        let text = """
            # comment
            top: value
            nested:
              inner: 1

              list:
                - a
                - {x: y}
            flow: [p, q]
            empty:
            quoted: "null"
            plain: ~
            """
        let document = try YAMLDocument(text: text, file: "f.yaml")
        #expect(document.file == "f.yaml")
        guard case .mapping(let entries) = document.root.value else {
            Issue.record("root is not a mapping")
            return
        }
        #expect(entries.map(\.key) == ["top", "nested", "flow", "empty", "quoted", "plain"])
        #expect(entries.map(\.line) == [2, 3, 9, 10, 11, 12])
        #expect(entries.map(\.value.line) == [2, 3, 9, 10, 11, 12])
        guard case .mapping(let nested) = entries[1].value.value else {
            Issue.record("nested is not a mapping")
            return
        }
        #expect(nested.map(\.line) == [4, 6])
        guard case .sequence(let list) = nested[1].value.value else {
            Issue.record("list is not a sequence")
            return
        }
        #expect(list.map(\.line) == [7, 8])
        guard case .mapping(let item) = list[1].value else {
            Issue.record("item is not a mapping")
            return
        }
        #expect(item.first?.line == 8)
        guard case .null = entries[3].value.value else {
            Issue.record("empty value is not null")
            return
        }
        #expect(entries[3].value.line == 10)
        guard case .scalar("null") = entries[4].value.value else {
            Issue.record("quoted null is not a string")
            return
        }
        guard case .null = entries[5].value.value else {
            Issue.record("~ is not null")
            return
        }
        #expect(document.root.file == "f.yaml")
    }

    /// YAML 1.2 core schema (§10.3.2) for plain scalars; quoted scalars are always strings.
    @Test(arguments: [
        ("true", ConfigNode.ImplicitType.boolean), ("False", .boolean), ("TRUE", .boolean),
        ("0", .number), ("-12", .number), ("+7", .number), ("0x1F", .number), ("0o17", .number),
        ("1.5", .number), ("-.5", .number), ("5.", .number), ("1e3", .number), ("2.5E-3", .number), ("+1e+9", .number),
        (".inf", .number), ("-.Inf", .number), (".NaN", .number),
    ])
    func plainScalarsOfTheCoreSchemaAreTyped(text: String, type: ConfigNode.ImplicitType) throws {
        let document = try YAMLDocument(text: "key: \(text)\nquoted: '\(text)'\n", file: "t.yaml")
        guard case .mapping(let entries) = document.root.value, entries.count == 2 else {
            Issue.record("not a two-entry mapping")
            return
        }
        #expect(entries[0].value.implicitType == type, "\(text)")
        #expect(entries[1].value.implicitType == nil, "quoted \(text)")
    }

    @Test(arguments: [
        "yes", "no", "on", "tRUE", "0x", "0xG1", "0o8", "0b101", "1_000", ".", "+", "+.", "1e", "1e+", "e3", ".e3",
        "1.2.3", "--1", "0x-1", "-0x1", "-.nan", ".inff", "inf", "nan", "1 2", "12abc", "abc", "2026-11-25", "1:30",
    ])
    func otherPlainScalarsAreStrings(text: String) throws {
        let document = try YAMLDocument(text: "key: \(text)\n", file: "t.yaml")
        guard case .mapping(let entries) = document.root.value, entries.count == 1 else {
            Issue.record("not a one-entry mapping for \(text)")
            return
        }
        #expect(entries[0].value.implicitType == nil, "\(text)")
        guard case .scalar(let value) = entries[0].value.value else {
            Issue.record("not a scalar: \(text)")
            return
        }
        #expect(value == text)
    }

    @Test func syntaxErrorCarriesFileAndLine() throws {
        #expect(throws: ConfigError(file: "bad.yaml", line: 2, message: "invalid YAML: mapping values are not allowed in this context")) {
            try YAMLDocument(text: "a: b\n  c: d\n", file: "bad.yaml")
        }
    }

    @Test func nonScalarKeysAreRefused() throws {
        #expect(throws: ConfigError(file: "k.yaml", line: 2, message: "mapping keys must be plain strings")) {
            try YAMLDocument(text: "a: 1\n? [x]\n: 2\n", file: "k.yaml")
        }
    }

    @Test func duplicateKeyIsReportedWhereItIsRepeated() throws {
        let document = try YAMLDocument(text: "a:\n  b: 1\n  c: 2\n  b: 3\n", file: "d.yaml")
        #expect(throws: ConfigError(file: "d.yaml", line: 4, message: "duplicate key 'a.b'")) {
            try ConfigMap(document.root).map("a")
        }
    }

    @Test("a repeated key keeps the rest of the file: every key is in the tree, the repetition under its own name")
    func duplicateKeysKeepTheRestOfTheFile() throws {
        let text = """
            a: 1
            nested:
              - {x: 1, y: 2, x: 3}
              - "k": 1
                k: 2
            a: 2
            b: {a: {a: 1}, a: 2}
            a: 3
            """
        let document = try YAMLDocument(text: text, file: "d.yaml")
        guard case .mapping(let entries) = document.root.value else {
            Issue.record("root is not a mapping")
            return
        }
        #expect(entries.map(\.key) == ["a", "nested", "a", "b", "a"])
        #expect(entries.map(\.line) == [1, 2, 6, 7, 8])
        let problems = ConfigProblems()
        let map = try ConfigMap(document.root, problems: problems)
        for item in try map.maps("nested") { _ = try item.string("x") }
        _ = try map.map("b")?.map("a")
        #expect(
            problems.sortedByLine() == [
                ConfigError(file: "d.yaml", line: 3, message: "duplicate key 'nested[0].x'"),
                ConfigError(file: "d.yaml", line: 5, message: "duplicate key 'nested[1].k'"),
                ConfigError(file: "d.yaml", line: 6, message: "duplicate key 'a'"),
                ConfigError(file: "d.yaml", line: 7, message: "duplicate key 'b.a'"),
            ])
    }

    @Test func secondDocumentIsRefused() throws {
        #expect {
            try YAMLDocument(text: "a: 1\n---\nb: 2\n", file: "two.yaml")
        } throws: { error in
            (error as? ConfigError)?.line == 2
        }
    }

    @Test func anchorsAndAliasesResolve() throws {
        let document = try YAMLDocument(text: "base: &b https://x.example\nother: *b\n", file: "a.yaml")
        guard case .mapping(let entries) = document.root.value, case .scalar(let value) = entries[1].value.value else {
            Issue.record("unexpected shape")
            return
        }
        #expect(value == "https://x.example")
    }
}
