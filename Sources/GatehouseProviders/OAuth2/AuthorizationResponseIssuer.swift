import GatehouseCore
import Synchronization

/// The RFC 9207 `iss` check of an authorization response (the mix-up defence of RFC 9700 §4.4),
/// shared by every kind built on the `oauth2` steps (`oauth2`, `oidc`, `spid`).
///
/// The rules, for a response that carries a code (an error response ends the login before any code
/// is exchanged, so it keeps its own error code; servers such as django-oauth-toolkit leave `iss` out of it):
///
/// - With an issuer configured, an `iss` must equal it exactly.
/// - With no issuer configured, an `iss` is refused: there is nothing to compare it with, and
///   accepting it unchecked would accept a response of another server. The operator sets `issuer`.
/// - A provider known to send `iss` must always send it; a response without one is refused. It is known
///   when its metadata says `authorization_response_iss_parameter_supported: true` (the provider file of
///   an `oauth2` provider, the discovery document of an `oidc` one), or once this instance has accepted
///   a response carrying the right `iss` (remembered for the life of the provider instance, not stored).
///
/// Every refusal is ``ProviderError/rejected(code:description:)`` with code `invalid_issuer`.
final class AuthorizationResponseIssuer: Sendable {
    /// Whether a response with the configured `iss` was accepted.
    private let seen = Mutex(false)

    init() {}

    /// Whether this instance has accepted a response carrying the configured `iss`.
    var hasSeenIssuer: Bool { seen.withLock { $0 } }

    /// Checks the `iss` of a callback that carries a code.
    /// - Parameters:
    ///   - callback: the authorization response's parameters.
    ///   - issuer: the configured issuer identifier, if any.
    ///   - advertised: the provider's metadata says it sends `iss` (`authorization_response_iss_parameter_supported`).
    /// - Throws: ``ProviderError/rejected(code:description:)`` `invalid_issuer` when a rule above is broken.
    func check(_ callback: [String: String], issuer: String?, advertised: Bool) throws(ProviderError) {
        guard let iss = callback["iss"] else {
            if advertised || hasSeenIssuer {
                throw Self.refusal("The callback lacks the iss parameter this provider sends with its authorization responses (RFC 9207).")
            }
            return
        }
        guard let issuer else {
            throw Self.refusal(
                "The provider sent an iss parameter but its provider file sets no 'issuer' to compare it with; "
                    + "set 'issuer' to the provider's issuer identifier (RFC 9207).")
        }
        guard iss == issuer else {
            throw Self.refusal("The callback's iss does not match the configured issuer (RFC 9207).")
        }
        seen.withLock { $0 = true }
    }

    private static func refusal(_ description: String) -> ProviderError {
        .rejected(code: "invalid_issuer", description: description)
    }
}
