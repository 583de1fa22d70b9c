import Foundation
import GatehouseCore

/// Verifies a backed assertion in the gateway (docs/providers/browserid.md):
/// parse → expiry (`exp` of assertion and certificate, `iat`/`nbf` not in the future, with skew) →
/// audience → principal email → issuer authority → certificate signature (IdP key) → assertion
/// signature (the certified user key).
///
/// Authority: the certificate's issuer may certify `user@D` when it is the end of `D`'s delegation chain
/// (support documents, pinned or fetched), or, when `D` has no IdP of its own, when it is one of the
/// trusted secondaries (the fallback IdP, browserid-local-verify's rule). Pinning a domain's support
/// document pins its key; it does not let that domain certify other domains' addresses.
struct BrowserIDLocalVerifier: Sendable {
    let audiences: [BrowserIDAudience]
    let trustedSecondaries: Set<String>
    let clockSkew: TimeInterval
    let documents: BrowserIDSupportDocuments
    let clock: TimeSource

    func verify(_ text: String, audience requested: String) async throws -> BrowserIDVerification {
        let backed = try BrowserIDBackedAssertion(parsing: text)
        let certificate = backed.certificate
        let assertion = backed.assertion
        let nowMilliseconds = clock.now().timeIntervalSince1970 * 1000
        let skew = clockSkew * 1000

        // Expiry first: no point fetching or computing for an assertion that is dead anyway.
        guard let expires = try assertion.milliseconds("exp", role: "assertion") else {
            throw BrowserIDFailure.malformed("the assertion has no 'exp'")
        }
        if expires + skew < nowMilliseconds {
            throw BrowserIDFailure.assertionExpired("the assertion expired at \(Self.format(expires))")
        }
        guard let certificateExpires = try certificate.milliseconds("exp", role: "certificate") else {
            throw BrowserIDFailure.malformed("the certificate has no 'exp'")
        }
        if certificateExpires + skew < nowMilliseconds {
            throw BrowserIDFailure.certificateExpired("the certificate expired at \(Self.format(certificateExpires))")
        }
        for (jws, role) in [(certificate, "certificate"), (assertion, "assertion")] {
            if let issued = try jws.milliseconds("iat", role: role), issued - skew > nowMilliseconds {
                throw BrowserIDFailure.notYetValid("the \(role) is issued in the future (\(Self.format(issued)))")
            }
            if let notBefore = try jws.milliseconds("nbf", role: role), notBefore - skew > nowMilliseconds {
                throw BrowserIDFailure.notYetValid("the \(role) is not valid before \(Self.format(notBefore))")
            }
        }

        let audienceText = try Self.checkAudience(of: assertion, against: audiences, requested: requested)

        // The principal: the certificate's email (or, in later certificates, `sub`).
        let principal = certificate.payload["principal"]?["email"]?.stringValueIfString ?? certificate.payload["sub"]?.stringValueIfString
        guard let email = principal else { throw BrowserIDFailure.malformed("the certificate has no principal email") }
        guard let principalDomain = BrowserIDDomain.ofEmail(email) else {
            throw BrowserIDFailure.malformed("the certificate's principal '\(email)' is not an email address")
        }
        guard let issuerText = certificate.payload["iss"]?.stringValueIfString else {
            throw BrowserIDFailure.malformed("the certificate has no 'iss'")
        }
        guard let issuer = BrowserIDDomain.normalize(issuerText) else {
            throw BrowserIDFailure.malformed("the certificate's issuer '\(issuerText)' is not a domain")
        }
        guard let userKeyJSON = certificate.payload["public-key"] else {
            throw BrowserIDFailure.malformed("the certificate has no 'public-key'")
        }
        let userKey = try BrowserIDPublicKey(json: userKeyJSON, role: "the certificate's 'public-key'")

        let issuerKeys = try await keys(of: issuer, certifying: principalDomain)
        try Self.verify(certificate, withAnyOf: issuerKeys, role: "certificate")
        try userKey.verify(assertion, role: "assertion")

        return BrowserIDVerification(
            email: email, audience: audienceText, issuer: issuer, expires: Date(timeIntervalSince1970: expires / 1000))
    }

    /// The keys of `issuer`, if it may certify addresses at `principalDomain`; else `untrusted_issuer`.
    func keys(of issuer: String, certifying principalDomain: String) async throws -> [BrowserIDPublicKey] {
        var unavailable: ProviderError?
        let authority: BrowserIDSupportDocuments.Authority
        do {
            authority = try await documents.authority(of: principalDomain)
        } catch let error as ProviderError {
            // Like an absent document, except that only a trusted secondary can still be accepted.
            unavailable = error
            authority = .none("the support document of '\(principalDomain)' could not be fetched")
        }
        switch authority {
        case .authoritative(let domain, let keys):
            guard domain == issuer else {
                throw BrowserIDFailure.untrustedIssuer("untrusted issuer, expected '\(domain)', got '\(issuer)'")
            }
            return keys
        case .none(let reason):
            guard trustedSecondaries.contains(issuer) else {
                if let unavailable { throw unavailable }
                throw BrowserIDFailure.untrustedIssuer(
                    "'\(issuer)' may not certify addresses at '\(principalDomain)': \(reason), and '\(issuer)' is not a trusted secondary")
            }
            switch try await documents.authority(of: issuer) {
            case .authoritative(_, let keys): return keys
            case .none(let reason): throw BrowserIDFailure.untrustedIssuer("the trusted secondary '\(issuer)' has no key: \(reason)")
            }
        }
    }

    /// Accepts the certificate if one of the issuer's keys verifies it.
    static func verify(_ jws: BrowserIDJWS, withAnyOf keys: [BrowserIDPublicKey], role: String) throws(BrowserIDFailure) {
        var firstFailure: BrowserIDFailure?
        for key in keys {
            do {
                try key.verify(jws, role: role)
                return
            } catch {
                // A key of another family is no verdict; a failing signature is, unless another key verifies.
                if firstFailure == nil || firstFailure?.code == "unsupported_algorithm" { firstFailure = error }
            }
        }
        throw firstFailure ?? .untrustedIssuer("the issuer has no key")
    }

    /// The assertion's `aud` must match a configured audience, and the audience the client named, if any.
    static func checkAudience(
        of assertion: BrowserIDJWS, against audiences: [BrowserIDAudience], requested: String
    ) throws(BrowserIDFailure) -> String {
        guard let text = assertion.payload["aud"]?.stringValueIfString, !text.isEmpty else {
            throw .malformed("the assertion has no 'aud'")
        }
        let asserted = try BrowserIDAudience.asserted(text).get()
        try match(asserted, against: audiences)
        let trimmed = requested.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty {
            guard let named = BrowserIDAudience(configured: trimmed) else {
                throw .audienceMismatch("the requested audience '\(trimmed)' is not an origin")
            }
            if let reason = named.mismatch(asserted) { throw .audienceMismatch(reason) }
        }
        return text
    }

    /// Passes when one configured audience matches; else the reason against the closest one.
    static func match(_ asserted: BrowserIDAudience, against audiences: [BrowserIDAudience]) throws(BrowserIDFailure) {
        var reasons: [String] = []
        for audience in audiences {
            guard let reason = audience.mismatch(asserted) else { return }
            reasons.append(reason)
        }
        // Same host: say what differs (scheme or port); otherwise it is the domain.
        let reason = zip(audiences, reasons).first { $0.0.host == asserted.host }?.1 ?? "domain mismatch"
        throw .audienceMismatch(reason)
    }

    static func format(_ milliseconds: Double) -> String {
        Date(timeIntervalSince1970: milliseconds / 1000).formatted(.iso8601)
    }
}
