import GatehouseCore
import Hummingbird
import Logging

/// The one place where errors become what the client is told. What an error means depends on where it
/// happened, which is why each entry point names its place rather than comparing strings.
enum ErrorMapping {
    /// Where a provider error interrupted a login.
    enum LoginSite: Sendable {
        /// The provider redirected back to the callback (an OAuth error, or the code exchange failed).
        case callback
        /// The login-page proxy captured a token and the adapter refused it.
        case pageCapture
    }

    /// OAuth authorization errors that the user or the provider chose; they reach the client unchanged.
    /// Anything else (`invalid_client`, …) is the gateway's configuration, not the client's business.
    private static let passedThrough: Set<String> = [
        "access_denied", "invalid_scope", "unauthorized_client", "unsupported_response_type",
        "interaction_required", "login_required", "consent_required",
    ]

    /// A provider error during an interactive login.
    static func loginFailure(_ error: ProviderError, at site: LoginSite) -> LoginFailure {
        switch (site, error) {
        case (_, .unavailable):
            let description = "The provider could not be reached; try again."
            return LoginFailure(error: .temporarilyUnavailable, description: description, problem: .upstreamUnavailable(description))
        case (.callback, .rejected(let code, let text)), (.callback, .identityVoid(let code, let text)):
            if passedThrough.contains(code) {
                let oauth = ProblemCode(rawValue: code)
                return LoginFailure(error: oauth, description: text, problem: GatehouseError(code: oauth, status: 400, detail: text))
            }
            return serverError("The provider refused the sign-in (\(code)).")
        case (.callback, .invalidGrant):
            return serverError("The provider refused the authorization code.")
        case (.callback, .invalidResponse(let reason)):
            return serverError("The provider's answer was not understood: \(reason)")
        case (.pageCapture, .rejected(let code, let reason)), (.pageCapture, .identityVoid(let code, let reason)):
            return LoginFailure(
                error: .accessDenied, description: "The captured token was refused (\(code)): \(reason)", problem: credentialRefusal(error))
        case (.pageCapture, .invalidGrant(let reason)), (.pageCapture, .invalidResponse(let reason)):
            return LoginFailure(error: .serverError, description: reason, problem: credentialRefusal(error))
        }
    }

    /// A legacy site refused the sign-in itself (`capture`: a `Denied error=<code>` title).
    static func siteDenied(_ code: String) -> LoginFailure {
        let description = "The site refused the sign-in (\(code))."
        let error = ProblemCode(rawValue: code)
        return LoginFailure(error: error, description: description, problem: GatehouseError(code: error, status: 403, detail: description))
    }

    private static func serverError(_ description: String) -> LoginFailure {
        LoginFailure(error: .serverError, description: description, problem: GatehouseError(code: .serverError, status: 502, detail: description))
    }

    /// A credential the client posted itself (an assertion, a captured token) was refused: 401 with the
    /// adapter's own stable code (`assertion_expired`, `audience_mismatch`, …), 503 when the provider is down.
    static func credentialRefusal(_ error: ProviderError) -> GatehouseError {
        switch error {
        case .unavailable: .upstreamUnavailable("The provider could not be reached.")
        case .rejected(let code, let reason), .identityVoid(let code, let reason):
            GatehouseError(code: ProblemCode(rawValue: code), status: 401, detail: reason)
        case .invalidGrant(let reason), .invalidResponse(let reason): GatehouseError(code: .invalidCredential, status: 401, detail: reason)
        }
    }

    /// A refresh failed: the answer, and whether the session must end (the provider will not renew it,
    /// or it now vouches for someone else). A provider that is down keeps the session.
    static func refreshFailure(_ error: ProviderError) -> (problem: GatehouseError, endsSession: Bool) {
        switch error {
        case .invalidGrant: (.reauthenticationRequired(), true)
        case .unavailable: (.upstreamUnavailable("The provider is unavailable; the session is kept. Try again later."), false)
        case .identityVoid(let code, _):
            (
                GatehouseError(
                    code: ProblemCode(rawValue: code), status: 401, detail: "The provider's refreshed identity is another user; sign in again."), true
            )
        case .rejected(let code, _):
            (GatehouseError(code: .badGateway, status: 502, detail: "The provider refused to refresh the credential (\(code))."), false)
        case .invalidResponse(let reason): (.badGateway("The provider's refresh answer was not understood: \(reason)"), false)
        }
    }

    /// Any error that reached the top of a request. Errors that are not ours become a bare 500, so
    /// provider or library text never reaches the client.
    static func problem(for error: any Error, logger: Logger) -> GatehouseError {
        switch error {
        case let error as GatehouseError:
            return error
        case let error as StoreUnavailableError:
            // Not a warning per request: the store's outage is logged once, then summarized (StoreOutageReporter).
            logger.debug("session store unavailable", metadata: ["reason": "\(error.reason)"])
            return .storeUnavailable()
        case let error as HTTPError:
            let code: ProblemCode =
                switch error.status.code {
                case 404: .notFound
                case 405: .methodNotAllowed
                case 413: .payloadTooLarge
                default: error.status.code < 500 ? .invalidRequest : .internalError
                }
            return GatehouseError(code: code, status: error.status.code, detail: error.body ?? error.status.reasonPhrase)
        default:
            logger.error("unhandled error", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            return GatehouseError(code: .internalError, status: 500, detail: "Internal error.")
        }
    }
}
