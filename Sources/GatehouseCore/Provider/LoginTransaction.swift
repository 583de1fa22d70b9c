public import Foundation

/// One login in flight, from `/login` to `/callback`. Sealed in the store under the hash of ``state``.
public struct LoginTransaction: Sendable, Codable, Equatable {
    /// The provider the login was started for (mix-up defence).
    public var provider: String
    /// The gateway's own state sent to the provider.
    public var state: String
    /// The gateway's PKCE verifier towards the provider.
    public var codeVerifier: String
    /// OIDC nonce.
    public var nonce: String
    /// The gateway's callback URL for this provider (`{public_url}/v1/auth/{id}/callback`).
    public var callbackURL: String
    /// Native flow: where the client waits, its `state` (as the client encoded it, sent back unchanged)
    /// and `code_challenge`.
    public var clientRedirectURI: String?
    public var clientState: String?
    public var clientCodeChallenge: String?
    /// Browser flow: same-origin path to return to.
    public var returnTo: String?
    /// Browser flow: SHA-256 (hex) of the login-binding secret held in the starting browser's cookie.
    public var browserBinding: String?
    /// Step-up (RFC 9470): the authentication context classes asked of the provider (`acr_values`); `nil`: none asked.
    public var acrValues: [String]?
    /// Step-up: the most seconds since the person authenticated the provider is asked for (`max_age`); `nil`: none asked.
    public var maxAge: Int?
    /// Browser step-up: the session of the starting browser this login replaces in place (same id, new token),
    /// when the login signs in the same person at the same provider.
    public var replacesSession: String?
    /// Browser flow for a device sign-in: the hash of the device code the login approves. The login then
    /// ends with a page saying to return to the terminal, never with a session cookie.
    public var deviceCodeHash: String?
    public var createdAt: Date

    public init(
        provider: String, state: String, codeVerifier: String, nonce: String, callbackURL: String,
        clientRedirectURI: String? = nil, clientState: String? = nil, clientCodeChallenge: String? = nil,
        returnTo: String? = nil, createdAt: Date
    ) {
        self.provider = provider
        self.state = state
        self.codeVerifier = codeVerifier
        self.nonce = nonce
        self.callbackURL = callbackURL
        self.clientRedirectURI = clientRedirectURI
        self.clientState = clientState
        self.clientCodeChallenge = clientCodeChallenge
        self.returnTo = returnTo
        self.createdAt = createdAt
    }

    /// What the login must prove of the authentication (``acrValues``, ``maxAge``); `nil` when it asked for nothing.
    public var stepUp: StepUpRequirement? {
        acrValues == nil && maxAge == nil ? nil : StepUpRequirement(acr: acrValues, maxAgeSeconds: maxAge)
    }

    /// The PKCE challenge the gateway sends to the provider.
    public var codeChallenge: String { PKCE.challenge(for: codeVerifier) }
}
