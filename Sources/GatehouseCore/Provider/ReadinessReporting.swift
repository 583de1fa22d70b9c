/// A provider that needs something from its provider before it can take logins (a discovery document).
///
/// The server asks before a login starts and in `/readyz`; providers that do not adopt it are always ready.
public protocol ReadinessReporting: AuthProvider {
    /// Checks (and, when stale, fetches) what the provider needs; never throws.
    var readiness: ProviderReadiness { get async }
}
