/// A benchmark that cannot go on (bad store contents, a wrong lookup answer); the message says why.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
