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

        /// Reads the `browserid` keys; the caller calls `finish()`. A collecting map reads them all (see ``ConfigMap``).
        public init(_ map: ConfigMap) throws {
            var audiences: [BrowserIDAudience] = []
            if let texts = try map.strings("audiences"), !texts.isEmpty {
                for text in texts {
                    guard let audience = BrowserIDAudience(configured: text) else {
                        try map.report(
                            "audiences",
                            "'\(map.qualified("audiences"))': '\(text)' is not an origin (https://host[:port], host[:port] or app://host)")
                        continue
                    }
                    audiences.append(audience)
                }
            } else {
                try map.report("audiences", "'\(map.qualified("audiences"))' is required (the origins assertions are addressed to)")
            }
            self.audiences = audiences
            let remoteURL = try map.url("remote_verifier_url")
            switch try map.choice("verifier", ["local", "remote"]) {
            case "remote":
                if let remoteURL {
                    verifier = .remote(url: remoteURL)
                } else {
                    try map.report(
                        "verifier", "'\(map.qualified("remote_verifier_url"))' is required when verifier is remote", after: ["remote_verifier_url"])
                    verifier = .remote(url: ConfigMap.placeholderURL)
                }
            default:
                if remoteURL != nil {
                    try map.report(
                        "remote_verifier_url", "'\(map.qualified("remote_verifier_url"))' is only used with 'verifier: remote'", after: ["verifier"])
                }
                verifier = .local
            }
            fetchSupportDocuments = try map.bool("fetch_support_documents") ?? true
            var secondaries: [String] = []
            for text in try map.strings("trusted_secondaries") ?? [] {
                guard let domain = BrowserIDDomain.normalize(text) else {
                    try map.report("trusted_secondaries", "'\(map.qualified("trusted_secondaries"))': '\(text)' is not a domain")
                    continue
                }
                secondaries.append(domain)
            }
            trustedSecondaries = secondaries
            var pinned: [String: String] = [:]
            for issuer in try map.maps("issuers") {
                let text = try issuer.requiredString("domain")
                let domain = BrowserIDDomain.normalize(text)
                if domain == nil {
                    try issuer.report("domain", "'\(issuer.qualified("domain"))': '\(text)' is not a domain")
                }
                let path = try issuer.requiredString("support_document_file")
                var document = ""
                if !issuer.hasProblem("support_document_file") { document = try issuer.readFile(path, key: "support_document_file") }
                do {
                    _ = try BrowserIDSupportDocument(data: Data(document.utf8), source: "support document")
                } catch {
                    try issuer.report("support_document_file", "'\(issuer.qualified("support_document_file"))': \(error.reason)")
                }
                if let domain, pinned[domain] != nil {
                    try issuer.report("domain", "'\(issuer.qualified("domain"))': '\(domain)' is pinned twice")
                }
                try issuer.finish()
                if let domain, pinned[domain] == nil, !issuer.hasProblem("support_document_file") { pinned[domain] = document }
            }
            pinnedSupportDocuments = pinned
            if !fetchSupportDocuments, case .local = verifier {
                if let secondary = trustedSecondaries.first(where: { pinned[$0] == nil }) {
                    try map.report(
                        "trusted_secondaries",
                        "'\(map.qualified("trusted_secondaries"))': '\(secondary)' needs a pinned support document in 'issuers' when fetch_support_documents is false",
                        after: ["issuers", "fetch_support_documents", "verifier"])
                }
            }
            clockSkew = TimeInterval(try map.int("clock_skew_seconds", range: 0...300) ?? Int(Self.defaultClockSkew))
            sessionLifetime = TimeInterval(try map.int("session_lifetime_seconds", range: 60...31_536_000) ?? Int(Self.defaultSessionLifetime))
        }
    }
}
