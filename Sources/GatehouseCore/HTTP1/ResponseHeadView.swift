/// An answer's head that ``ResponseHeadReader`` read: where each part of it is in the bytes it was read from, and
/// how its body is framed.
public struct ResponseHeadView: Equatable, Sendable {
    /// The head's bytes, its empty line included: where the body starts.
    public let length: Int
    /// Where the status line's CR LF starts.
    public let statusLineEnd: Int
    /// The status code (100 to 999, not 101).
    public let status: Int
    /// The field lines, in order.
    public let fields: [HeadField]
    /// How the body that follows is delimited.
    public let framing: ResponseFraming
    /// An `HTTP/1.0` answer: its connection is not kept unless it says so.
    public let http10: Bool
}
