import Foundation
public import GatehouseCore
import JWTKit

/// An Azure ACS relying party. The token arrives as the `window.external.Notify` JSON (captured by the
/// gateway's login-page proxy through the injected shim) or posted by a client that captured it itself
/// (`POST /v1/auth/{id}/token` with the Notify JSON, the `securityToken`, or the bare SWT/JWT).
public struct ACSProvider: LoginPageProvider {
    public let descriptor: ProviderDescriptor
    public let configuration: Configuration
    let context: ProviderContext
    /// The keys of `jwks_url` (``JWKSCache``'s rules: max age, refetch on an unknown `kid`).
    let jwks: JWKSCache

    static let nameIdentifierClaim = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/nameidentifier"
    static let emailClaim = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"

    public init(descriptor: ProviderDescriptor, configuration: Configuration, context: ProviderContext) {
        self.descriptor = descriptor
        self.configuration = configuration
        self.context = context
        self.jwks = JWKSCache(context: context)
    }

    public var features: ProviderFeatures { ProviderFeatures(expiryKnown: true) }

    // MARK: LoginPageProvider

    public var loginURL: String { configuration.loginURL ?? configuration.identityProvidersURL ?? "" }
    public var allowedOrigins: [String] { configuration.allowedOrigins }

    public func loginStartURL() async throws -> String {
        if let loginURL = configuration.loginURL { return loginURL }
        guard let discovery = configuration.identityProvidersURL else { throw ProviderError.invalidResponse("no login URL") }
        let response = try await context.http.send(
            ProviderHTTP.jsonRequest(discovery), unreachable: "the identity provider list could not be fetched")
        guard response.status == 200, case .array(let entries)? = response.json,
            let first = entries.first?["LoginUrl"]?.stringValue, let origin = WebOrigin.of(first), allowedOrigins.contains(origin)
        else { throw ProviderError.invalidResponse("the identity provider list has no usable LoginUrl") }
        return first
    }

    // MARK: TokenLoginProvider

    public func validateToken(_ token: String) async throws -> LoginResult {
        do {
            return try await validate(token)
        } catch let failure as ACSFailure {
            throw failure.providerError
        }
    }

    /// Validates and throws ``ACSFailure`` (tests look at the code).
    public func validate(_ text: String) async throws -> LoginResult {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 65_536 else { throw ACSFailure.malformed("the token is empty or too long") }
        var notifyExpires: Int64?
        let token: String
        if trimmed.hasPrefix("{") {
            let payload = try ACSNotifyPayload(json: trimmed)
            notifyExpires = payload.expires
            token = payload.token
        } else if trimmed.hasPrefix("<") || trimmed.hasPrefix("&lt;") {
            token = try ACSNotifyPayload.token(fromSecurityToken: trimmed)
        } else {
            token = trimmed
        }
        let now = context.clock.now()
        if Self.looksLikeJWT(token) {
            guard configuration.tokenFormat == .jwt else { throw ACSFailure.unsupported("this relying party takes SWT tokens, not JWT") }
            return try await validateJWT(token, now: now)
        }
        guard configuration.tokenFormat == .swt, let key = configuration.signingKey else {
            throw ACSFailure.unsupported("this relying party takes JWT tokens, not SWT")
        }
        let swt = try SimpleWebToken.validate(
            token, key: key, issuer: configuration.issuer, audiences: [configuration.realm], now: now, clockSkew: configuration.clockSkew)
        var expires = swt.expiresOn
        if let notifyExpires { expires = min(expires, Date(timeIntervalSince1970: TimeInterval(notifyExpires))) }
        let claims = swt.claims
        let identity = try identity(from: claims.mapValues { JSONValue.string($0) })
        return LoginResult(identity: identity, credential: Credential(accessToken: token, tokenType: "WRAP", expiresAt: expires, issuedAt: now))
    }

    static func looksLikeJWT(_ token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && !token.contains("=") && !token.contains("&")
    }

    func identity(from claims: [String: JSONValue]) throws(ACSFailure) -> Identity {
        if let identity = descriptor.claims.identity(from: .object(claims)) { return identity }
        // ACS passes through what the identity provider gave: fall back to `sub`, then the email address.
        for fallback in ["sub", Self.nameIdentifierClaim, descriptor.claims.email, Self.emailClaim] {
            var mapping = descriptor.claims
            mapping.subject = fallback
            if let identity = mapping.identity(from: .object(claims)) { return identity }
        }
        throw .malformed("the token has no subject claim ('\(descriptor.claims.subject)')")
    }

    // MARK: JWT

    struct Payload: JWTPayload {
        var exp: ExpirationClaim
        var iss: IssuerClaim?
        var aud: AudienceClaim?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    func validateJWT(_ token: String, now: Date) async throws -> LoginResult {
        // The key type is the configuration's choice, never the header's (RFC 8725 §3.1).
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard let headerData = Base64URL.decode(String(parts[0])), let header = JSONValue.parse(headerData)?.objectValue,
            let alg = header["alg"]?.stringValue
        else {
            throw ACSFailure.malformed("the JWT header is not JSON with an alg")
        }
        let keys: JWTKeyCollection
        if let jwksURL = configuration.jwksURL {
            guard JWKSCache.keyType(for: alg) != nil else {
                throw ACSFailure.invalidSignature("alg '\(alg)' is not allowed with the configured key set")
            }
            // An unknown kid refetches the key set (a rotation), as often as the cache allows.
            guard let key = try await jwks.key(kid: header["kid"]?.stringValue, alg: alg, url: jwksURL),
                let verifier = try? await JWKSCache.verifier(for: key)
            else {
                throw ACSFailure.invalidSignature("the JWT does not verify with the configured keys")
            }
            keys = verifier
        } else if let signingKey = configuration.signingKey {
            guard alg == "HS256" else { throw ACSFailure.invalidSignature("alg '\(alg)' is not allowed with the configured signing key (HS256)") }
            keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: signingKey), digestAlgorithm: .sha256)
        } else {
            throw ACSFailure.unsupported("no key is configured for JWTs")
        }
        let payload: Payload
        do {
            payload = try await keys.verify(token, as: Payload.self)
        } catch {
            throw ACSFailure.invalidSignature("the JWT does not verify with the configured keys")
        }
        guard now.timeIntervalSince(payload.exp.value) <= configuration.clockSkew else { throw ACSFailure.expired("the JWT has expired") }
        guard let audience = payload.aud, audience.value.contains(configuration.realm) else {
            throw ACSFailure.audienceMismatch("the JWT is not for this realm")
        }
        guard payload.iss?.value == configuration.issuer else { throw ACSFailure.issuerMismatch("the JWT was not issued by the configured issuer") }
        guard let data = Base64URL.decode(String(parts[1])), let claims = JSONValue.parse(data)?.objectValue else {
            throw ACSFailure.malformed("the JWT payload is not a JSON object")
        }
        let identity = try identity(from: claims)
        return LoginResult(
            identity: identity, credential: Credential(accessToken: token, tokenType: "WRAP", expiresAt: payload.exp.value, issuedAt: now))
    }
}
