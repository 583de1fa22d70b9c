import GatehouseCore

extension GatewayConfiguration {
    /// `backend:` — the one upstream application behind `/v1/api/…` and what identity it receives.
    public struct Backend: Sendable, Equatable {
        /// Base URL without trailing slash: `/v1/api/{path}` goes to `{url}/{path}`.
        public var url: String
        /// `aud` of `X-Gatehouse-Assertion`.
        public var audience: String
        /// Whether `X-Gatehouse-Provider`, `-Subject`, `-Email` and `-Groups` are sent (and ``claimHeaders``).
        public var identityHeaders: Bool
        /// `identity_headers: {claims: …}`: further fields carrying the session's claims, in the order written
        /// (the mapping form also turns ``identityHeaders`` on).
        public var claimHeaders: [ClaimHeader] = []
        /// Whether the signed `X-Gatehouse-Assertion` is sent.
        public var assertion: Bool
        /// Whether the fresh provider access token is forwarded (opt-in).
        public var forwardAccessToken: Bool
        /// `timeout_seconds`: how long the upstream may take to start its answer; `nil`: `limits.upstream_timeout_seconds`.
        public var timeoutSeconds: Int?
        /// `tls`: the trust and the client certificate of an `https` upstream; nil: only `outbound_tls`.
        public var tls: UpstreamTLS?

        /// - Parameters:
        ///   - url: `http://127.0.0.1:9000` by default.
        ///   - audience: `backend` by default.
        ///   - identityHeaders: true by default.
        ///   - assertion: true by default.
        ///   - forwardAccessToken: false by default.
        public init(
            url: String = "http://127.0.0.1:9000", audience: String = "backend", identityHeaders: Bool = true,
            assertion: Bool = true, forwardAccessToken: Bool = false
        ) {
            self.url = url
            self.audience = audience
            self.identityHeaders = identityHeaders
            self.assertion = assertion
            self.forwardAccessToken = forwardAccessToken
        }

        init(_ map: ConfigMap) throws {
            try self.init(map, defaults: Backend())
        }

        /// A backend-shaped map (`backend:`, or one entry of `upstreams:` after its own keys were read): each key
        /// that is not written comes from `defaults`.
        init(_ map: ConfigMap, defaults: Backend) throws {
            self = defaults
            url = try map.baseURL("url") ?? url
            audience = try map.nonEmptyString("audience") ?? audience
            if let written = map.node("identity_headers"), case .mapping = written.value, let headers = try map.map("identity_headers") {
                identityHeaders = true
                claimHeaders = try ClaimHeader.read(headers)
            } else {
                identityHeaders = try map.bool("identity_headers") ?? identityHeaders
            }
            assertion = try map.bool("assertion") ?? assertion
            forwardAccessToken = try map.bool("forward_access_token") ?? forwardAccessToken
            timeoutSeconds = try map.positiveInt("timeout_seconds", unit: "seconds") ?? timeoutSeconds
            if let section = try map.map("tls") { tls = try UpstreamTLS.read(section) }
            try map.finish()
        }
    }
}
