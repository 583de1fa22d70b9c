import ArgumentParser
import Foundation

/// `--ca-file`: what the client trusts for an `https` gateway besides the system's roots, `SSL_CERT_FILE` and
/// `SSL_CERT_DIR` (a gateway whose certificate a private authority signed).
struct TrustOptions: ParsableArguments {
    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp(
            "A PEM file of certificate authorities to trust for the gateway, besides the system's (and SSL_CERT_FILE's); login keeps it for whoami, api and logout.",
            valueName: "path"))
    var caFile: String?

    /// ``caFile`` as an absolute path, as a sign-in stores it (later commands may run in another directory).
    var absoluteCAFile: String? {
        guard let caFile else { return nil }
        if caFile.hasPrefix("/") { return caFile }
        return URL(fileURLWithPath: caFile, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL.path
    }
}
