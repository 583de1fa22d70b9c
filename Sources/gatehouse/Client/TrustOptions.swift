import ArgumentParser

/// `--ca-file`: what the client trusts for an `https` gateway besides the system's roots, `SSL_CERT_FILE` and
/// `SSL_CERT_DIR` (a gateway whose certificate a private authority signed).
struct TrustOptions: ParsableArguments {
    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp(
            "A PEM file of certificate authorities to trust for the gateway, besides the system's (and SSL_CERT_FILE's).",
            valueName: "path"))
    var caFile: String?
}
