import GatehouseCore

extension DPoPPolicy {
    /// `sessions.dpop:` — `mode` (optional | required | off), `max_age_seconds`, `require_nonce`,
    /// `nonce_lifetime_seconds`.
    init(_ map: ConfigMap) throws {
        self.init()
        if let text = try map.choice("mode", Mode.allCases.map(\.rawValue)), let value = Mode(rawValue: text) {
            mode = value
        }
        maxAgeSeconds = try map.int("max_age_seconds", range: 1...3600) ?? maxAgeSeconds
        requireNonce = try map.bool("require_nonce") ?? requireNonce
        nonceLifetimeSeconds = try map.int("nonce_lifetime_seconds", range: 1...86_400) ?? nonceLifetimeSeconds
        try map.finish()
    }
}
