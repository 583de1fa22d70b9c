import GatehouseCore

extension DPoPPolicy {
    /// `sessions.dpop:` — `mode` (optional | required | off), `max_age_seconds`, `require_nonce`,
    /// `nonce_lifetime_seconds`, `replay` (store | instance; `instance` implies nonces, so an explicit
    /// `require_nonce: false` beside it is an error).
    init(_ map: ConfigMap) throws {
        self.init()
        if let text = try map.choice("mode", Mode.allCases.map(\.rawValue)), let value = Mode(rawValue: text) {
            mode = value
        }
        maxAgeSeconds = try map.int("max_age_seconds", range: 1...3600) ?? maxAgeSeconds
        requireNonce = try map.bool("require_nonce") ?? requireNonce
        nonceLifetimeSeconds = try map.int("nonce_lifetime_seconds", range: 1...86_400) ?? nonceLifetimeSeconds
        if let text = try map.choice("replay", Replay.allCases.map(\.rawValue)), let value = Replay(rawValue: text) {
            replay = value
        }
        if replay == .instance, map.contains("require_nonce"), !requireNonce {
            try map.report(
                "require_nonce",
                "'\(map.qualified("require_nonce"))' must not be false with 'replay: instance': a proof is accepted only with a nonce "
                    + "of the instance that records its jti (leave require_nonce out, or set it to true)",
                after: ["replay"])
        }
        try map.finish()
    }
}
