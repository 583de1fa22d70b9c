/// A field line of a head read from the bytes (``RequestHeadReader``, ``ResponseHeadReader``): its name as sent,
/// and its value without the spaces and tabs before it (those after it are kept, as NIOHTTP1 keeps them).
public struct HeadField: Equatable, Sendable {
    /// The name's bytes, as sent.
    public let name: Range<Int>
    /// The value's bytes, from its first byte that is not a space or tab to the line's end.
    public let value: Range<Int>
}
