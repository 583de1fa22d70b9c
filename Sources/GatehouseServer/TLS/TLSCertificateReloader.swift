import GatehouseConfiguration
import Logging

/// Re-reads the TLS certificate and key on SIGHUP (``HangupReloader``, after ``ProviderReloader``): new
/// connections get the new pair, open ones go on with theirs; a pair that is refused leaves the old one.
struct TLSCertificateReloader: Sendable {
    let contexts: TLSContextStore
    let logger: Logger

    func reload() {
        do {
            let pair = try contexts.reload()
            logger.notice(
                "TLS certificate reloaded",
                metadata: [
                    "certificate_file": "\(contexts.configuration.certificateFile)", "chain": "\(pair.chainLength)",
                    "expires": "\(TLSCertificatePair.format(pair.notValidAfter))",
                ])
        } catch {
            // The problem names a file and what is wrong with it, never a key's content.
            logger.error(
                "TLS certificate reload refused: keeping the previous certificate and key",
                metadata: ["certificate_file": "\(contexts.configuration.certificateFile)", "error": "\(error)"])
        }
    }
}
