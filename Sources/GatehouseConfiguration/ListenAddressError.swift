/// A `--listen` value that is not `host:port`.
public struct ListenAddressError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The text that was given.
    public var value: String

    /// - Parameter value: the text that was given.
    public init(value: String) {
        self.value = value
    }

    public var description: String { "listen address must be host:port (e.g. 127.0.0.1:8080), not '\(value)'" }
}
