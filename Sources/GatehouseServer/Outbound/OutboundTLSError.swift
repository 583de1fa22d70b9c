/// Why an outbound TLS configuration cannot be built: a file named by the configuration, by `SSL_CERT_FILE` or
/// by `--ca-file` that cannot be read or holds nothing usable. Words for the operator, naming the file.
public struct OutboundTLSError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
