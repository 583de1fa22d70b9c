/// A field line of a head read from the bytes (``RequestHeadReader``, ``ResponseHeadReader``): its name as sent,
/// and its value without the spaces and tabs before it (those after it are kept, as NIOHTTP1 keeps them).
package struct HeadField: Equatable, Sendable {
    package let name: Range<Int>
    package let value: Range<Int>
}
