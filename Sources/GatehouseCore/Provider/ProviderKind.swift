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
    ///
    /// The provider catalog hands a *collecting* map (``ConfigMap/collects``), so that one run reports every
    /// problem of the file: its accessors record what is wrong and answer nil or a placeholder instead of
    /// throwing. A kind reports the problems its own checks find with ``ConfigMap/report(_:_:after:)`` (naming
    /// the keys a check depends on, so that it is dropped as a follow-on when one of them is wrong) and goes on
    /// to read every key and call `finish()`. When the map collects problems, the provider built is discarded.
    static func make(descriptor: ProviderDescriptor, settings: ConfigMap, context: ProviderContext) throws -> any AuthProvider
}

extension ProviderKind {
    public static var defaultAPIAuthentication: APIAuthentication { .bearer }
    public static var apiAuthenticationStyles: [APIAuthentication] { [] }
    public static var defaultClaims: ClaimMapping { ClaimMapping() }
}
