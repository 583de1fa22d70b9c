/// The members of an RFC 9457 problem document as the gateway writes them.
struct ProblemDocument: Encodable {
    var type = "about:blank"
    /// RFC 9457 §4.2.1: with `about:blank`, the status's reason phrase.
    var title: String
    var status: Int
    var detail: String
    /// The stable, machine-readable reason (`ProblemCode`).
    var code: String
    var retryAfter: Int?
    var requestID: String?

    enum CodingKeys: String, CodingKey {
        case type, title, status, detail, code
        case retryAfter = "retry_after"
        case requestID = "request_id"
    }
}
