/// A request head that ``RequestHeadReader`` read: where each part of it is in the bytes it was read from.
public struct RequestHeadView: Equatable, Sendable {
    /// The head's bytes, its empty line included: where a body or the next request starts.
    public let length: Int
    /// The method's bytes.
    public let method: Range<Int>
    /// The request target's bytes (origin form).
    public let target: Range<Int>
    /// The field lines, in order.
    public let fields: [HeadField]
}
