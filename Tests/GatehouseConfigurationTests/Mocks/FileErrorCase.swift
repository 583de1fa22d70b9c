import Testing

/// One provider file of a given kind with several problems, and every problem it must produce, as `line: message`
/// in line order.
struct FileErrorCase: Sendable, CustomTestStringConvertible {
    var kind: String
    var yaml: String
    var expected: [String]
    var environment: [String: String] = [:]

    init(_ kind: String, _ yaml: String, _ expected: [String], environment: [String: String] = [:]) {
        self.kind = kind
        self.yaml = yaml
        self.expected = expected
        self.environment = environment
    }

    var testDescription: String { kind }
}
