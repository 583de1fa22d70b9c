public import Foundation
public import GatehouseCore

extension ACSProvider {
    /// The token format the relying party is configured for (`token_format`).
    public enum TokenFormat: String, Sendable, Equatable {
        case swt
        case jwt
    }

    /// The `acs` keys of a provider file.
    public struct Configuration: Sendable {
        /// The ACS sign-in page (`login_url`), or nil when `identity_providers_url` is used.
        public var loginURL: String?
        /// `IdentityProviders.js?protocol=javascriptnotify&…`: the first identity provider's `LoginUrl` is used.
        public var identityProvidersURL: String?
        public var allowedOrigins: [String]
        /// The relying-party realm: the SWT `Audience` / JWT `aud`.
        public var realm: String
        /// `https://<ns>.accesscontrol.windows.net/`.
        public var issuer: String
        public var tokenFormat: TokenFormat
        /// The base64-decoded token signing key (SWT, or HS256 JWTs).
        public var signingKey: Data?
        /// Where the JWT verification keys are (JWT, asymmetric algorithms only).
        public var jwksURL: String?
        public var clockSkew: TimeInterval

        public init(
            loginURL: String?, identityProvidersURL: String? = nil, allowedOrigins: [String], realm: String, issuer: String,
            tokenFormat: TokenFormat = .swt, signingKey: Data? = nil, jwksURL: String? = nil, clockSkew: TimeInterval = 30
        ) {
            self.loginURL = loginURL
            self.identityProvidersURL = identityProvidersURL
            self.allowedOrigins = allowedOrigins
            self.realm = realm
            self.issuer = issuer
            self.tokenFormat = tokenFormat
            self.signingKey = signingKey
            self.jwksURL = jwksURL
            self.clockSkew = clockSkew
        }

        /// Reads the `acs` keys; the caller calls `finish()`. A collecting map reads them all (see ``ConfigMap``).
        public init(_ map: ConfigMap) throws {
            loginURL = try map.url("login_url")
            identityProvidersURL = try map.url("identity_providers_url")
            if loginURL == nil && identityProvidersURL == nil {
                try map.report(
                    "login_url", "'\(map.qualified("login_url"))' or '\(map.qualified("identity_providers_url"))' is required",
                    after: ["identity_providers_url"])
            }
            allowedOrigins = try LoginPageSettings.origins(map)
            for url in [loginURL, identityProvidersURL].compactMap({ $0 }) {
                guard let origin = WebOrigin.of(url), allowedOrigins.contains(origin) else {
                    try map.report("allowed_origins", "'\(map.qualified("allowed_origins"))' must contain the origin of '\(url)'")
                    break
                }
            }
            realm = try map.requiredString("realm")
            issuer = try map.requiredString("issuer")
            tokenFormat = TokenFormat(rawValue: try map.choice("token_format", ["swt", "jwt"]) ?? "swt") ?? .swt
            signingKey = nil
            if let keyText = try map.secret("signing_key") {
                if let key = Data(base64Encoded: keyText), key.count >= 16 {
                    signingKey = key
                } else {
                    try map.report("signing_key", "'\(map.qualified("signing_key"))' must be a base64 key of at least 16 bytes")
                }
            }
            jwksURL = try map.url("jwks_url")
            let written = ["token_format", "signing_key", "jwks_url"]
            switch tokenFormat {
            case .swt where signingKey == nil:
                try map.report("signing_key", "'\(map.qualified("signing_key"))' is required for token_format swt", after: written)
            case .jwt where jwksURL == nil && signingKey == nil:
                try map.report(
                    "jwks_url", "'\(map.qualified("jwks_url"))' (or an HS256 'signing_key') is required for token_format jwt", after: written)
            case .jwt where jwksURL != nil && signingKey != nil:
                try map.report(
                    "signing_key", "'\(map.qualified("signing_key"))' and 'jwks_url' exclude each other for token_format jwt", after: written)
            default: break
            }
            clockSkew = TimeInterval(try map.int("clock_skew_seconds", range: 0...300) ?? 30)
        }
    }
}

/// Shared reading of `allowed_origins` for the login-page kinds.
enum LoginPageSettings {
    /// The origins of `allowed_origins`; collecting, the valid ones (none when the key is missing).
    static func origins(_ map: ConfigMap) throws -> [String] {
        guard let texts = try map.strings("allowed_origins"), !texts.isEmpty else {
            try map.report("allowed_origins", "'\(map.qualified("allowed_origins"))' is required (the origins the login pages come from)")
            return []
        }
        var origins: [String] = []
        for text in texts {
            guard let origin = WebOrigin.of(text), let components = URLComponents(string: text),
                components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil, components.user == nil
            else {
                try map.report("allowed_origins", "'\(map.qualified("allowed_origins"))': '\(text)' is not an origin (scheme://host[:port])")
                continue
            }
            origins.append(origin)
        }
        return origins
    }
}
