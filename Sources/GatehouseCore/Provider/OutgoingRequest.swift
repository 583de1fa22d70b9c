/// The parts of an upstream request a provider may change to attach its credential.
public struct OutgoingRequest: Sendable {
    /// Absolute URL including the query.
    public var url: String
    public var headers: [(name: String, value: String)]

    public init(url: String, headers: [(name: String, value: String)] = []) {
        self.url = url
        self.headers = headers
    }
}
