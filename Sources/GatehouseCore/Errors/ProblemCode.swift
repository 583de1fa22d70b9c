/// The stable `code` member of a problem document: the part of an error a program may branch on.
///
/// Every code the gateway itself answers with is a constant here, and ``gatewayCodes`` lists them all
/// (the API's contract; `/openapi.json` enumerates it). A provider kind whose client-posted credentials
/// are refused with codes of their own (`assertion_expired`, `audience_mismatch`, …) declares them in
/// its folder; they reach the client through ``CredentialRefusal`` and ``ProviderError/rejected(code:description:)``.
public struct ProblemCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    // MARK: Requests
    /// The request is malformed or breaks a rule of the API.
    public static let invalidRequest = ProblemCode(rawValue: "invalid_request")
    /// The request path cannot be normalized (malformed escapes, encoded `/`, `..` above the root, …).
    public static let invalidPath = ProblemCode(rawValue: "invalid_path")
    /// The request target is longer than the limit (414).
    public static let uriTooLong = ProblemCode(rawValue: "uri_too_long")
    /// The request's header fields are larger than the limit (431).
    public static let headersTooLarge = ProblemCode(rawValue: "headers_too_large")
    /// The request body is larger than the limit (413).
    public static let payloadTooLarge = ProblemCode(rawValue: "payload_too_large")
    /// The request body made no progress for `limits.client_body_timeout_seconds` (408).
    public static let requestTimeout = ProblemCode(rawValue: "request_timeout")
    /// No such route (404).
    public static let notFound = ProblemCode(rawValue: "not_found")
    /// The route exists, not with this method (405).
    public static let methodNotAllowed = ProblemCode(rawValue: "method_not_allowed")
    /// The provider cannot do what was asked (e.g. an assertion posted to an `oauth2` provider).
    public static let unsupportedOperation = ProblemCode(rawValue: "unsupported_operation")
    /// No provider with this id is configured.
    public static let unknownProvider = ProblemCode(rawValue: "unknown_provider")

    // MARK: Logins and handoff codes
    /// A handoff code that is unknown, expired, replayed or bound to another client.
    public static let invalidGrant = ProblemCode(rawValue: "invalid_grant")
    /// `POST /v1/session` with another `grant_type` than `authorization_code`.
    public static let unsupportedGrantType = ProblemCode(rawValue: "unsupported_grant_type")
    /// A credential the client posted (assertion, token) was refused, without a more precise code of its kind.
    public static let invalidCredential = ProblemCode(rawValue: "invalid_credential")
    /// A browser login was completed in another browser than the one that started it (login CSRF).
    public static let loginNotBound = ProblemCode(rawValue: "login_not_bound")
    /// No page login in progress under this address.
    public static let unknownLogin = ProblemCode(rawValue: "unknown_login")
    /// Too many page logins in progress.
    public static let tooManyLogins = ProblemCode(rawValue: "too_many_logins")
    /// The login-page proxy only fetches a provider's configured origins.
    public static let originNotAllowed = ProblemCode(rawValue: "origin_not_allowed")
    /// The provider is configured but cannot take logins yet (e.g. its discovery document failed).
    public static let providerUnavailable = ProblemCode(rawValue: "provider_unavailable")
    /// The user or the provider refused the sign-in.
    public static let accessDenied = ProblemCode(rawValue: "access_denied")
    /// The access rule asks for a stronger or more recent authentication than the session's (RFC 9470).
    public static let stepUpRequired = ProblemCode(rawValue: "step_up_required")
    /// The provider's answer to a login could not be used.
    public static let serverError = ProblemCode(rawValue: "server_error")
    /// The provider could not be reached during a login; try again.
    public static let temporarilyUnavailable = ProblemCode(rawValue: "temporarily_unavailable")

    // MARK: Sessions
    /// The session token is missing, unknown, expired or cannot be opened.
    public static let invalidSession = ProblemCode(rawValue: "invalid_session")
    /// The provider no longer accepts the session's credential; the session has ended.
    public static let reauthenticationRequired = ProblemCode(rawValue: "reauthentication_required")
    /// A cookie-authenticated unsafe request without `X-CSRF`.
    public static let csrfRequired = ProblemCode(rawValue: "csrf_required")
    /// The session belongs to another provider than the one whose API was called.
    public static let providerMismatch = ProblemCode(rawValue: "provider_mismatch")
    /// The session's credential has no refresh token.
    public static let notRefreshable = ProblemCode(rawValue: "not_refreshable")
    /// A DPoP proof is missing, malformed, signed by another key, for another request, too old or replayed.
    public static let invalidDPoPProof = ProblemCode(rawValue: "invalid_dpop_proof")
    /// The proof must carry the nonce the answer's `DPoP-Nonce` gives (RFC 9449 §8).
    public static let useDPoPNonce = ProblemCode(rawValue: "use_dpop_nonce")
    /// The token is presented with the wrong scheme: a key-bound session as `Bearer`, or a bearer session as `DPoP`.
    public static let invalidToken = ProblemCode(rawValue: "invalid_token")
    /// A provider-issued bearer token, valid, that lacks a scope `bearer_tokens.required_scopes` lists (RFC 6750 §3.1).
    public static let insufficientScope = ProblemCode(rawValue: "insufficient_scope")

    // MARK: Upstreams and providers' APIs
    /// An upstream (provider or backend) cannot be reached; try again (`Retry-After`).
    public static let upstreamUnavailable = ProblemCode(rawValue: "upstream_unavailable")
    /// An upstream answered something the gateway cannot pass on.
    public static let badGateway = ProblemCode(rawValue: "bad_gateway")
    /// An upstream did not answer in time.
    public static let upstreamTimeout = ProblemCode(rawValue: "upstream_timeout")
    /// A provider's login page is larger than the proxy relays.
    public static let upstreamTooLarge = ProblemCode(rawValue: "upstream_too_large")
    /// A provider's API refused the session's token (translated from the provider's error format).
    public static let providerTokenRejected = ProblemCode(rawValue: "provider_token_rejected")
    /// A provider's API wants a scope the session's token lacks.
    public static let providerInsufficientScope = ProblemCode(rawValue: "provider_insufficient_scope")
    /// A provider's API answered another error in its own format.
    public static let providerError = ProblemCode(rawValue: "provider_error")

    // MARK: The gateway itself
    /// The session store cannot be reached; try again (`Retry-After`).
    public static let storeUnavailable = ProblemCode(rawValue: "store_unavailable")
    /// `/readyz`: no provider is configured.
    public static let noProviders = ProblemCode(rawValue: "no_providers")
    /// The gateway's configuration cannot be used.
    public static let invalidConfiguration = ProblemCode(rawValue: "invalid_configuration")
    /// Anything else; details are logged, never shown.
    public static let internalError = ProblemCode(rawValue: "internal_error")

    /// Every code the gateway answers with by itself, in the order above.
    public static let gatewayCodes: [ProblemCode] = [
        .invalidRequest, .invalidPath, .uriTooLong, .headersTooLarge, .payloadTooLarge, .requestTimeout, .notFound, .methodNotAllowed,
        .unsupportedOperation, .unknownProvider,
        .invalidGrant, .unsupportedGrantType, .invalidCredential, .loginNotBound, .unknownLogin, .tooManyLogins,
        .originNotAllowed, .providerUnavailable, .accessDenied, .stepUpRequired, .serverError, .temporarilyUnavailable,
        .invalidSession, .reauthenticationRequired, .csrfRequired, .providerMismatch, .notRefreshable,
        .invalidDPoPProof, .useDPoPNonce, .invalidToken, .insufficientScope,
        .upstreamUnavailable, .badGateway, .upstreamTimeout, .upstreamTooLarge, .providerTokenRejected,
        .providerInsufficientScope, .providerError,
        .storeUnavailable, .noProviders, .invalidConfiguration, .internalError,
    ]
}
