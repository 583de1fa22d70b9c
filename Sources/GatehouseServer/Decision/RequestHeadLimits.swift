import GatehouseCore

/// The limits of a request head, the one judgment of the router (``RequestHeadMiddleware``) and the relay:
/// exactly one `Host` (RFC 9112 §3.2), a request target within `limits`' URL bound (414) and a field section
/// within `max_header_bytes` (431), each refused with a problem document.
enum RequestHeadLimits {
    /// The refusal, if any. `fieldBytes` counts each field as name + value + 4 (`: ` and CRLF).
    static func refusal(hosts: Int, targetBytes: Int, fieldBytes: Int, maxURLBytes: Int, maxHeaderBytes: Int) -> GatehouseError? {
        guard hosts == 1 else { return GatehouseError.invalidRequest("An HTTP/1.1 request needs exactly one Host header.") }
        guard targetBytes <= maxURLBytes else {
            return GatehouseError(code: .uriTooLong, status: 414, detail: "The request target exceeds \(maxURLBytes) bytes.")
        }
        guard fieldBytes <= maxHeaderBytes else {
            return GatehouseError(code: .headersTooLarge, status: 431, detail: "The request headers exceed \(maxHeaderBytes) bytes.")
        }
        return nil
    }

    /// The same with a gateway's settings.
    static func refusal(hosts: Int, targetBytes: Int, fieldBytes: Int, settings: ServerSettings) -> GatehouseError? {
        refusal(
            hosts: hosts, targetBytes: targetBytes, fieldBytes: fieldBytes, maxURLBytes: settings.maxURLBytes, maxHeaderBytes: settings.maxHeaderBytes
        )
    }
}
