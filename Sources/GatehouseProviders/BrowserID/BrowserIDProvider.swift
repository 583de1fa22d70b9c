import Foundation
public import GatehouseCore

/// The `browserid` adapter: a client posts a backed identity assertion to `/v1/auth/{id}/assertion`;
/// the gateway verifies it (locally, or with a configured remote verifier) and starts a session whose
/// subject and email are the verified address.
///
/// An assertion is single-purpose proof, not a reusable token, so the session's credential is a random
/// opaque value with no expiry and no refresh token; the session lasts `session_lifetime_seconds`.
/// BrowserID has neither refresh nor revocation: logout only ends the gateway's session.
public struct BrowserIDProvider: AssertionLoginProvider {
    public let descriptor: ProviderDescriptor
    public let configuration: Configuration
    let context: ProviderContext
    private let verifier: Verifier

    private enum Verifier: Sendable {
        case local(BrowserIDLocalVerifier)
        case remote(BrowserIDRemoteVerifier)
    }

    /// Timeout of a support-document fetch or a remote verification.
    static let timeout: Duration = .seconds(10)

    /// Creates the adapter. Throws ``BrowserIDFailure`` when a pinned support document or its domain is invalid
    /// (``BrowserIDKind`` has already reported such mistakes with `file:line`).
    public init(descriptor: ProviderDescriptor, configuration: Configuration, context: ProviderContext) throws {
        try self.init(descriptor: descriptor, configuration: configuration, context: context, supportDocumentURL: nil)
    }

    /// - Parameter supportDocumentURL: for tests and the loopback stand-in: where a domain's support
    ///   document is fetched instead of `https://<domain>/.well-known/browserid`.
    init(
        descriptor: ProviderDescriptor, configuration: Configuration, context: ProviderContext,
        supportDocumentURL: (@Sendable (String) -> String)?
    ) throws {
        self.descriptor = descriptor
        self.configuration = configuration
        self.context = context
        switch configuration.verifier {
        case .remote(let url):
            verifier = .remote(
                BrowserIDRemoteVerifier(
                    url: url, audiences: configuration.audiences, http: ProviderHTTP(transport: context.transport, timeout: Self.timeout)))
        case .local:
            var pinned: [String: BrowserIDSupportDocument] = [:]
            for (domain, text) in configuration.pinnedSupportDocuments {
                guard let normalized = BrowserIDDomain.normalize(domain) else {
                    throw BrowserIDFailure.untrustedIssuer("'\(domain)' is not a domain")
                }
                pinned[normalized] = try BrowserIDSupportDocument(data: Data(text.utf8), source: "pinned support document of '\(domain)'")
            }
            let documents: BrowserIDSupportDocuments
            if let supportDocumentURL {
                documents = BrowserIDSupportDocuments(
                    pinned: pinned, fetching: configuration.fetchSupportDocuments, transport: context.transport, clock: context.clock,
                    timeout: Self.timeout, url: supportDocumentURL)
            } else {
                documents = BrowserIDSupportDocuments(
                    pinned: pinned, fetching: configuration.fetchSupportDocuments, transport: context.transport, clock: context.clock,
                    timeout: Self.timeout)
            }
            verifier = .local(
                BrowserIDLocalVerifier(
                    audiences: configuration.audiences, trustedSecondaries: Set(configuration.trustedSecondaries),
                    clockSkew: configuration.clockSkew, documents: documents, clock: context.clock))
        }
    }

    // MARK: AssertionLoginProvider

    /// Verifies the backed assertion; a refusal is ``ProviderError/rejected(code:description:)`` with a
    /// stable code (`assertion_expired`, `certificate_expired`, `audience_mismatch`, `untrusted_issuer`,
    /// `invalid_signature`, `malformed_assertion`, `assertion_too_large`, `unsupported_algorithm`,
    /// `unsupported_certificate_chain`, `not_yet_valid`); an unreachable IdP or verifier is `.unavailable`.
    public func verifyAssertion(_ assertion: String, audience: String) async throws -> LoginResult {
        let verification: BrowserIDVerification
        do {
            switch verifier {
            case .local(let local): verification = try await local.verify(assertion, audience: audience)
            case .remote(let remote): verification = try await remote.verify(assertion, audience: audience)
            }
        } catch let failure as BrowserIDFailure {
            throw failure.providerError
        }
        let now = context.clock.now()
        let identity = Identity(
            subject: verification.email, email: verification.email,
            claims: ["issuer": verification.issuer, "audience": verification.audience])
        // Not the assertion: it proves one login and must not be replayed anywhere; a random handle instead.
        let credential = Credential(
            accessToken: RandomToken.make(), tokenType: "Bearer", refreshToken: nil, expiresAt: nil, issuedAt: now,
            extras: ["issuer": verification.issuer])
        return LoginResult(identity: identity, credential: credential, sessionLifetime: configuration.sessionLifetime)
    }
}
