public import Foundation
public import GatehouseCore

extension BrowserIDProvider {
    /// Who verifies: the gateway itself, or a remote verifier service.
    public enum VerifierMode: Sendable, Equatable {
        /// The gateway verifies signatures, expiry, audience and issuer authority (the default).
        case local
        /// `POST assertion+audience` to this URL; the answer's audience is checked again.
        case remote(url: String)
    }

    /// The `browserid` keys of a provider file.
    public struct Configuration: Sendable {
        /// The relying-party origins assertions must be addressed to (`audiences`, required).
        public var audiences: [BrowserIDAudience]
        public var verifier: VerifierMode
        /// Support documents pinned per domain (`issuers: [{domain, support_document_file}]`), as JSON text.
        public var pinnedSupportDocuments: [String: String]
        /// Whether `https://<domain>/.well-known/browserid` may be fetched (`fetch_support_documents`, default true).
        public var fetchSupportDocuments: Bool
        /// Fallback IdPs allowed to certify addresses whose domain has no IdP of its own (`trusted_secondaries`).
        public var trustedSecondaries: [String]
        /// Allowed clock difference for `exp`, `iat` and `nbf` (`clock_skew_seconds`, default 30, at most 300).
        public var clockSkew: TimeInterval
        /// The session's lifetime (`session_lifetime_seconds`, default 3600); BrowserID has no refresh.
        public var sessionLifetime: TimeInterval

        /// Default clock skew, seconds.
        public static let defaultClockSkew: TimeInterval = 30
        /// Default session lifetime, seconds.
        public static let defaultSessionLifetime: TimeInterval = 3600

        /// Creates a configuration; `pinnedSupportDocuments` maps a domain to its support document's JSON text.
        public init(
            audiences: [BrowserIDAudience], verifier: VerifierMode = .local, pinnedSupportDocuments: [String: String] = [:],
            fetchSupportDocuments: Bool = true, trustedSecondaries: [String] = [], clockSkew: TimeInterval = Self.defaultClockSkew,
            sessionLifetime: TimeInterval = Self.defaultSessionLifetime
        ) {
            self.audiences = audiences
            self.verifier = verifier
            self.pinnedSupportDocuments = pinnedSupportDocuments
            self.fetchSupportDocuments = fetchSupportDocuments
            self.trustedSecondaries = trustedSecondaries
            self.clockSkew = clockSkew
            self.sessionLifetime = sessionLifetime
        }

        /// Reads the `browserid` keys; the caller calls `finish()`.
        public init(_ map: ConfigMap) throws {
            guard let audienceTexts = try map.strings("audiences"), !audienceTexts.isEmpty else {
                throw map.error("audiences", "'\(map.qualified("audiences"))' is required (the origins assertions are addressed to)")
            }
            audiences = try audienceTexts.map { text in
                guard let audience = BrowserIDAudience(configured: text) else {
                    throw map.error("audiences", "'\(map.qualified("audiences"))': '\(text)' is not an origin (https://host[:port], host[:port] or app://host)")
                }
                return audience
            }
            let remoteURL = try map.url("remote_verifier_url")
            switch try map.choice("verifier", ["local", "remote"]) {
            case "remote":
                guard let remoteURL else {
                    throw map.error("verifier", "'\(map.qualified("remote_verifier_url"))' is required when verifier is remote")
                }
                verifier = .remote(url: remoteURL)
            default:
                if remoteURL != nil {
                    throw map.error("remote_verifier_url", "'\(map.qualified("remote_verifier_url"))' is only used with 'verifier: remote'")
                }
                verifier = .local
            }
            fetchSupportDocuments = try map.bool("fetch_support_documents") ?? true
            trustedSecondaries = try (map.strings("trusted_secondaries") ?? []).map { text in
                guard let domain = BrowserIDDomain.normalize(text) else {
                    throw map.error("trusted_secondaries", "'\(map.qualified("trusted_secondaries"))': '\(text)' is not a domain")
                }
                return domain
            }
            var pinned: [String: String] = [:]
            for issuer in try map.maps("issuers") {
                let text = try issuer.requiredString("domain")
                guard let domain = BrowserIDDomain.normalize(text) else {
                    throw issuer.error("domain", "'\(issuer.qualified("domain"))': '\(text)' is not a domain")
                }
                let path = try issuer.requiredString("support_document_file")
                let document = try issuer.readFile(path, key: "support_document_file")
                do {
                    _ = try BrowserIDSupportDocument(data: Data(document.utf8), source: "support document")
                } catch {
                    throw issuer.error("support_document_file", "'\(issuer.qualified("support_document_file"))': \(error.reason)")
                }
                guard pinned[domain] == nil else {
                    throw issuer.error("domain", "'\(issuer.qualified("domain"))': '\(domain)' is pinned twice")
                }
                try issuer.finish()
                pinned[domain] = document
            }
            pinnedSupportDocuments = pinned
            if !fetchSupportDocuments, case .local = verifier {
                if let secondary = trustedSecondaries.first(where: { pinned[$0] == nil }) {
                    throw map.error(
                        "trusted_secondaries",
                        "'\(map.qualified("trusted_secondaries"))': '\(secondary)' needs a pinned support document in 'issuers' when fetch_support_documents is false")
                }
            }
            clockSkew = TimeInterval(try map.int("clock_skew_seconds", range: 0...300) ?? Int(Self.defaultClockSkew))
            sessionLifetime = TimeInterval(try map.int("session_lifetime_seconds", range: 60...31_536_000) ?? Int(Self.defaultSessionLifetime))
        }
    }
}
