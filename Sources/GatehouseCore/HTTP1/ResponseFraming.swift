/// How an answer's body is delimited (RFC 9112 §6.3), as ``ResponseHeadReader`` reads it from the head.
public enum ResponseFraming: Equatable, Sendable {
    /// No body: an answer to `HEAD`, a `1xx`, `204` or `304`.
    case bodiless
    /// `Content-Length` bytes.
    case length(Int)
    /// `Transfer-Encoding: chunked`: chunks up to the last one and its trailer section.
    case chunked
    /// Neither field: the body ends with the connection.
    case untilClose
}
