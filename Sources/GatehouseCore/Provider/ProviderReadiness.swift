/// Whether a provider can take logins now (an `oidc` provider is not ready while discovery fails).
public enum ProviderReadiness: Sendable, Equatable {
    /// Logins can start.
    case ready
    /// Logins get 503 `provider_unavailable`; the reason is shown by `/readyz`.
    case notReady(String)
}
