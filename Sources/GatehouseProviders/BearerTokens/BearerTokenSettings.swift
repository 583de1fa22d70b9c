public import GatehouseCore

/// `bearer_tokens:` of an `oidc` or `oauth2` provider file: whether access tokens the provider issued
/// are accepted from machine clients in place of a Gatehouse session, and what they must say.
public struct BearerTokenSettings: Sendable, Equatable {
    /// The file key.
    public static let key = "bearer_tokens"
    /// The most a verdict is reused when the file says nothing.
    public static let defaultCacheSeconds = 300

    /// `accept` (default false).
    public var accept: Bool
    /// `aud` (JWT or introspection answer) must contain one of these; required with `accept`.
    public var audiences: [String]
    /// Every one of these must be granted (`scope` or `scp`).
    public var requiredScopes: [String]
    /// How long a verdict is reused, never past the token's `exp`.
    public var cacheSeconds: Int
    /// The RFC 7662 endpoint; `oidc` falls back to the discovered `introspection_endpoint`.
    public var introspectionEndpoint: String?
    /// `bearer_tokens.claims`; `nil`: the file's `claims` with the subject from `sub`, else `username`, else `client_id`.
    public var claims: ClaimMapping?

    /// Not accepted: what a file without `bearer_tokens` means.
    public static let disabled = BearerTokenSettings(accept: false)

    public init(
        accept: Bool, audiences: [String] = [], requiredScopes: [String] = [], cacheSeconds: Int = BearerTokenSettings.defaultCacheSeconds,
        introspectionEndpoint: String? = nil, claims: ClaimMapping? = nil
    ) {
        self.accept = accept
        self.audiences = audiences
        self.requiredScopes = requiredScopes
        self.cacheSeconds = cacheSeconds
        self.introspectionEndpoint = introspectionEndpoint
        self.claims = claims
    }

    /// Reads `bearer_tokens` of a provider file (absent: ``disabled``); `fileClaims` is the file's `claims`,
    /// the defaults of `bearer_tokens.claims`. Problems are reported at their `file:line` as the map does.
    public init(_ settings: ConfigMap, claims fileClaims: ClaimMapping) throws {
        guard let map = try settings.map(Self.key) else {
            self = .disabled
            return
        }
        let accept = try map.bool("accept") ?? false
        let audiences = try map.strings("audiences")
        if accept, audiences?.isEmpty ?? true, !map.hasProblem("audiences") {
            try map.report(
                "accept", "'\(map.qualified("audiences"))' is required with '\(map.qualified("accept"))': true (the `aud` a token must carry)",
                after: ["accept"])
        }
        let claims = try map.map("claims").map { try ClaimMapping($0, defaults: fileClaims) }
        self.init(
            accept: accept,
            audiences: audiences ?? [],
            requiredScopes: try map.strings("required_scopes") ?? [],
            cacheSeconds: try map.int("cache_seconds", range: 0...86_400) ?? Self.defaultCacheSeconds,
            introspectionEndpoint: try map.url("introspection_endpoint"),
            claims: claims)
        try map.finish()
    }

    /// The nested key of ``introspectionEndpoint``, for ``InsecureHTTPPolicy/check(_:keys:)``.
    public static let introspectionEndpointKey = "\(key).introspection_endpoint"
}
