import Testing

/// A secret key of a provider kind, with a valid provider file around it (the secret on the last line).
struct SecretCase: Sendable, CustomTestStringConvertible {
    var kind: String
    var key: String
    /// The provider file without the secret's line.
    var file: String
    /// A valid value of the secret.
    var value: String

    var testDescription: String { "\(kind) \(key)" }

    /// The file with `line` appended, and the number of that line.
    func with(_ line: String) -> (text: String, line: Int) {
        (file + line + "\n", file.split(separator: "\n", omittingEmptySubsequences: false).count)
    }
}
