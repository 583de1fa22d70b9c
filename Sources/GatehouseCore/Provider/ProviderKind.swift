/// A provider kind: the factory the registry keeps under ``kind``.
///
/// ```swift
/// enum OAuth2Kind: ProviderKind {
///     static let kind = "oauth2"
///     static func make(descriptor:settings:context:) throws -> any AuthProvider { … }
/// }
/// ```
public protocol ProviderKind: Sendable {
    /// The `kind:` value in provider files.
    static var kind: String { get }
    /// Default `api.auth` of this kind.
    static var defaultAPIAuthentication: APIAuthentication { get }
    /// Attachment styles of this kind's own, valid as `api.auth` values besides the common ones.
    static var apiAuthenticationStyles: [APIAuthentication] { get }
    /// Where the normalized identity comes from unless `claims:` says otherwise.
    static var defaultClaims: ClaimMapping { get }
    /// Builds a provider from its file. `settings` is the whole file; the common keys are already read.
    /// Must call `settings.finish()` so unknown keys are refused.
    static func make(descriptor: ProviderDescriptor, settings: ConfigMap, context: ProviderContext) throws -> any AuthProvider
}

extension ProviderKind {
    public static var defaultAPIAuthentication: APIAuthentication { .bearer }
    public static var apiAuthenticationStyles: [APIAuthentication] { [] }
    public static var defaultClaims: ClaimMapping { ClaimMapping() }
}
