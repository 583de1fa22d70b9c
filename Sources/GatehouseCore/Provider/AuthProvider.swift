/// One configured identity provider: the plugin contract every kind implements.
///
/// The base protocol only describes the provider. What it can do is expressed by the small capability
/// protocols it also adopts, the Dex way: ``RedirectLoginProvider`` (`oauth2`, `spid`, `oidc`),
/// ``AssertionLoginProvider`` (`browserid`), ``TokenLoginProvider`` (`acs`, `capture`),
/// ``LoginPageProvider`` (gateway-served legacy login pages), ``RefreshingProvider`` and
/// ``RevokingProvider``. The server asks which capabilities a provider has and drives the flow; an
/// adapter never sees a route, a request or a store.
///
/// ```swift
/// struct MyProvider: RedirectLoginProvider, RefreshingProvider { … }
/// ```
public protocol AuthProvider: Sendable {
    /// The keys every kind has (`id`, `kind`, `name`, `redirect_uris`, `claims`, `api`).
    var descriptor: ProviderDescriptor { get }
    /// Facts the conformances cannot tell (whether a revocation endpoint is configured, …).
    var features: ProviderFeatures { get }
    /// Attaches the credential to a request for the provider's own API. Default: ``APIAuthentication``.
    func attach(_ credential: Credential, to request: inout OutgoingRequest)
}

extension AuthProvider {
    public var features: ProviderFeatures { ProviderFeatures() }

    public func attach(_ credential: Credential, to request: inout OutgoingRequest) {
        descriptor.api?.authentication.attach(credential, to: &request)
    }

    /// How a client logs in with this provider, derived from its conformances.
    public var loginStyle: LoginStyle {
        if self is any RedirectLoginProvider { return .redirect }
        if self is any AssertionLoginProvider { return .assertion }
        return .token
    }

    /// The capability flags of `GET /v1/providers`, derived from conformances and ``features``.
    public var capabilities: ProviderCapabilities {
        ProviderCapabilities(
            refresh: self is any RefreshingProvider,
            revocation: self is any RevokingProvider && features.revocation,
            expiryKnown: features.expiryKnown,
            userinfo: features.userinfo,
            legacyCapture: self is any LoginPageProvider
        )
    }
}
