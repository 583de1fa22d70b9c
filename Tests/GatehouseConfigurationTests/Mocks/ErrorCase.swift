import Testing

/// One configuration text and the one problem it must produce, as `line: message`.
struct ErrorCase: Sendable, CustomTestStringConvertible {
    var yaml: String
    var expected: String
    var environment: [String: String] = [:]

    init(_ yaml: String, _ expected: String, environment: [String: String] = [:]) {
        self.yaml = yaml
        self.expected = expected
        self.environment = environment
    }

    var testDescription: String { expected }
}
