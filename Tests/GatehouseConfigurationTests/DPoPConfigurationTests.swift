import GatehouseConfiguration
import GatehouseCore
import Testing

/// `sessions.dpop.replay`: the key, its variable, and the one combination it refuses.
struct DPoPConfigurationTests {
    static func parse(_ yaml: String, environment: [String: String] = [:]) throws -> DPoPPolicy {
        try GatewayConfiguration.parse(yaml, file: "/tmp/gatehouse.yaml", environment: environment).sessions.dpop
    }

    @Test func storeByDefaultWithoutNonces() throws {
        let policy = try Self.parse("store: {kind: \"memory\"}\n")
        #expect(policy.replay == .store)
        #expect(!policy.requiresNonce)
    }

    @Test func instanceImpliesNonces() throws {
        let policy = try Self.parse("sessions:\n  dpop:\n    replay: instance\n")
        #expect(policy.replay == .instance)
        #expect(!policy.requireNonce)
        #expect(policy.requiresNonce)
        #expect(try Self.parse("sessions:\n  dpop: {replay: instance, require_nonce: true}\n").requiresNonce)
        #expect(try Self.parse("sessions:\n  dpop: {replay: store, require_nonce: true}\n").requiresNonce)
    }

    @Test func fromTheEnvironment() throws {
        let policy = try Self.parse("store: {kind: \"memory\"}\n", environment: ["GATEHOUSE_SESSIONS_DPOP_REPLAY": "instance"])
        #expect(policy.replay == .instance)
    }

    @Test func refusesAnUnknownModeAndNoncesTurnedOffBesideInstance() {
        #expect(
            Fixtures.parseErrors("sessions:\n  dpop:\n    replay: memory\n") == [
                "/tmp/gatehouse.yaml:3: 'sessions.dpop.replay' must be one of store, instance, not 'memory'"
            ])
        #expect(
            Fixtures.parseErrors("sessions:\n  dpop:\n    replay: instance\n    require_nonce: false\n") == [
                "/tmp/gatehouse.yaml:4: 'sessions.dpop.require_nonce' must not be false with 'replay: instance': a proof is accepted only "
                    + "with a nonce of the instance that records its jti (leave require_nonce out, or set it to true)"
            ])
    }
}
