import Foundation
import GatehouseCore

/// Asks a remote verifier service (`POST assertion=…&audience=…`, Persona's `/verify` protocol) and
/// checks the audience of its answer again. The assertion is parsed, size-checked and its audience
/// matched locally first, so garbage never leaves the gateway.
struct BrowserIDRemoteVerifier: Sendable {
    let url: String
    let audiences: [BrowserIDAudience]
    /// The provider's transport with the verifier's deadline.
    let http: ProviderHTTP

    func verify(_ text: String, audience requested: String) async throws -> BrowserIDVerification {
        let backed = try BrowserIDBackedAssertion(parsing: text)
        let audience = try BrowserIDLocalVerifier.checkAudience(of: backed.assertion, against: audiences, requested: requested)

        let response = try await http.send(
            .form(url: url, [("assertion", text), ("audience", audience)]), unreachable: "the remote verifier could not be reached",
            serverError: { "the remote verifier answered \($0)" })
        guard response.status == 200, let answer = response.json?.objectValue else {
            throw ProviderError.invalidResponse("the remote verifier answered \(response.status) without a JSON verdict")
        }
        guard answer["status"]?.stringValueIfString == "okay" else {
            let reason = answer["reason"]?.stringValueIfString ?? "the remote verifier refused the assertion"
            throw Self.failure(for: String(reason.prefix(200)))
        }
        guard let email = answer["email"]?.stringValueIfString, BrowserIDDomain.ofEmail(email) != nil,
            let returnedAudience = answer["audience"]?.stringValueIfString
        else {
            throw ProviderError.invalidResponse("the remote verifier's answer lacks 'email' or 'audience'")
        }
        // Never trust the verifier's idea of the audience: it must be ours.
        let asserted = try BrowserIDAudience.asserted(returnedAudience).get()
        try BrowserIDLocalVerifier.match(asserted, against: audiences)
        let expires = answer["expires"]?.doubleValue.map { Date(timeIntervalSince1970: $0 / 1000) } ?? Date.distantFuture
        return BrowserIDVerification(
            email: email, audience: returnedAudience, issuer: answer["issuer"]?.stringValueIfString ?? "", expires: expires)
    }

    /// Maps the verifier's reason text to the stable codes where it is recognisable.
    static func failure(for reason: String) -> BrowserIDFailure {
        let lowered = reason.lowercased()
        if lowered.contains("audience") { return BrowserIDFailure(code: "audience_mismatch", reason: reason) }
        if lowered.contains("expired") { return BrowserIDFailure(code: "assertion_expired", reason: reason) }
        if lowered.contains("issuer") { return BrowserIDFailure(code: "untrusted_issuer", reason: reason) }
        if lowered.contains("signature") { return BrowserIDFailure(code: "invalid_signature", reason: reason) }
        return .remoteRefused(reason)
    }
}
