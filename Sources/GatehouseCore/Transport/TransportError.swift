/// The provider could not be reached or did not answer in time.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) {
        self.description = description
    }
}
