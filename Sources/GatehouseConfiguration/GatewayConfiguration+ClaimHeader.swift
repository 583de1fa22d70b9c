import GatehouseCore

extension GatewayConfiguration {
    /// One entry of `identity_headers: {claims: {"X-Header": "claim"}}`: the field an upstream receives and the claim
    /// whose value it carries (a top-level claim of the session or of the provider token; a list joined with `,`).
    public struct ClaimHeader: Sendable, Equatable {
        /// The field's name, as written.
        public let name: String
        /// The claim's name.
        public let claim: String

        public init(name: String, claim: String) {
            self.name = name
            self.claim = claim
        }

        /// Names an upstream must never get from a claim: what the gateway sets itself, what frames or routes the
        /// request, the client's credentials, and hop-by-hop fields.
        static let reserved: Set<String> = [
            "host", "authorization", "cookie", "set-cookie", "content-length", "content-type", "content-encoding", "transfer-encoding",
            "connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "upgrade",
            "expect", "dpop", "forwarded", "x-real-ip", "x-request-id", "traceparent", "tracestate",
        ]

        /// Reads the `claims:` mapping of `identity_headers` (in `map`), reporting every bad entry at its line.
        static func read(_ map: ConfigMap) throws -> [ClaimHeader] {
            guard let claims = try map.map("claims") else {
                try map.report("claims", "'\(map.qualified("claims"))' is required in the mapping form: {claims: {\"X-Header\": \"claim\"}}")
                try map.finish()
                return []
            }
            var headers: [ClaimHeader] = []
            var seen: Set<String> = []
            if case .mapping(let entries) = claims.node.value {
                for entry in entries {
                    let name = entry.key
                    let key = claims.qualified(name)
                    guard let claim = try claims.string(name) else { continue }
                    if let problem = problem(ofName: name) {
                        try claims.report(name, "'\(key)': \(problem)")
                    } else if !seen.insert(name.lowercased()).inserted {
                        try claims.report(name, "'\(key)': the field is named twice (names are compared without case)")
                    } else if claim.isEmpty {
                        try claims.report(name, "'\(key)' must name a claim, like department")
                    } else {
                        headers.append(ClaimHeader(name: name, claim: claim))
                    }
                }
            } else {
                try map.report("claims", "'\(map.qualified("claims"))' must be a mapping of field names to claim names")
            }
            try map.finish()
            return headers
        }

        /// What is wrong with `name` as the field of a claim, if anything.
        static func problem(ofName name: String) -> String? {
            let lowered = name.lowercased()
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(isTokenCharacter) else {
                return "'\(name)' is not a header field name (letters, digits and !#$%&'*+-.^`|~ only)"
            }
            if name.contains("_") {
                return "'\(name)' holds '_': CGI and WSGI servers read it as '-', and the gateway drops such fields from clients"
            }
            if lowered.hasPrefix("x-gatehouse-") || lowered.hasPrefix("x-forwarded-") || lowered.hasPrefix("proxy-") {
                return "'\(name)' is the gateway's own (X-Gatehouse-*, X-Forwarded-*, Proxy-*)"
            }
            if reserved.contains(lowered) { return "'\(name)' is set by the gateway or the connection, never from a claim" }
            return nil
        }

        /// RFC 9110 `tchar`.
        private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
            guard scalar.isASCII else { return false }
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9": return true
            default: return "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
            }
        }
    }
}
