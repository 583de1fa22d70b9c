import Foundation
import GatehouseCore
import GatehouseDemo
import GatehouseProviders
import Testing

/// Back-channel logout tokens (OpenID Connect Back-Channel Logout 1.0 §2.6): every check refuses on its own.
@Suite struct OIDCLogoutTokenTests {
    static let event = "http://schemas.openid.net/event/backchannel-logout"

    /// A good logout token's claims for the stand-in's issuer and client.
    static func claims(_ idp: StandInOIDCProvider) -> [String: JSONValue] {
        let now = Date().timeIntervalSince1970.rounded()
        return [
            "iss": .string(idp.issuer), "aud": .string(idp.clientID), "iat": .number(now), "exp": .number(now + 120),
            "jti": .string("jti-1"), "sub": .string("user-alice"), "sid": .string("sid-1"),
            "events": .object([event: .object([:])]),
        ]
    }

    static let logoutHeader: [String: JSONValue] = ["typ": .string("logout+jwt")]

    /// A refusal's code, or nil when the token is accepted.
    static func refusal(_ makeToken: @Sendable (StandInOIDCProvider) -> String) async -> String? {
        let fixture = OIDCFixture { $0.backchannelLogout = true }
        fixture.transport.enqueue(fixture.discovery())
        fixture.transport.enqueue(fixture.jwks())
        do {
            _ = try await fixture.provider.verifyLogoutToken(makeToken(fixture.idp))
            return nil
        } catch ProviderError.rejected(let code, _) {
            return code
        } catch {
            return "\(error)"
        }
    }

    /// A good token with `edit` applied to its claims, signed with the provider's key.
    static func edited(
        _ edit: @escaping @Sendable (inout [String: JSONValue]) -> Void, header: [String: JSONValue] = logoutHeader
    ) -> @Sendable (StandInOIDCProvider) -> String {
        { idp in
            var claims = claims(idp)
            edit(&claims)
            return idp.signed(claims, header: header)
        }
    }

    @Test("a good token names its sid, sub and jti")
    func accepted() async throws {
        let fixture = OIDCFixture { $0.backchannelLogout = true }
        fixture.transport.enqueue(fixture.discovery())
        fixture.transport.enqueue(fixture.jwks())
        let token = try await fixture.provider.verifyLogoutToken(fixture.idp.signed(Self.claims(fixture.idp), header: Self.logoutHeader))
        #expect(token.sid == "sid-1")
        #expect(token.subject == "user-alice")
        #expect(token.jti == "jti-1")
        #expect(token.match == .providerSession(sid: "sid-1", subject: "user-alice"))
        #expect(fixture.provider.acceptsBackChannelLogout)
        #expect(!OIDCFixture().provider.acceptsBackChannelLogout)
    }

    @Test("without typ, with only sid, only sub, no exp or several audiences, the token is accepted")
    func acceptedVariants() async {
        #expect(await Self.refusal(Self.edited({ _ in }, header: ["typ": .null])) == nil)
        #expect(await Self.refusal(Self.edited({ _ in }, header: ["typ": .string("application/logout+jwt")])) == nil)
        #expect(await Self.refusal(Self.edited { $0["sid"] = nil }) == nil)
        #expect(await Self.refusal(Self.edited { $0["sub"] = nil }) == nil)
        #expect(await Self.refusal(Self.edited { $0["exp"] = nil }) == nil)
        #expect(await Self.refusal(Self.edited { $0["aud"] = .array([.string("other"), .string(OIDCFixture().idp.clientID)]) }) == nil)
    }

    static let refusals: [(String, String, @Sendable (StandInOIDCProvider) -> String)] = [
        (
            "bad signature", "invalid_logout_token_signature",
            { idp in
                let good = idp.signed(claims(idp), header: logoutHeader)
                let other = StandInOIDCSigningKey().sign(claims(idp), header: logoutHeader)
                return good.split(separator: ".")[0...1].joined(separator: ".") + "." + other.split(separator: ".")[2]
            }
        ),
        (
            "alg none", "logout_token_alg_not_allowed",
            { idp in
                let unsigned = idp.signed(claims(idp), header: ["alg": .string("none"), "typ": .string("logout+jwt")])
                return unsigned.split(separator: ".")[0...1].joined(separator: ".") + "."
            }
        ),
        ("HS256 with the public key as secret", "logout_token_alg_not_allowed", { idp in idp.signedWithPublicKeyAsHMACSecret(claims(idp)) }),
        ("wrong iss", "logout_token_issuer_mismatch", edited { $0["iss"] = .string("https://evil.example") }),
        ("wrong aud", "logout_token_audience_mismatch", edited { $0["aud"] = .string("someone-else") }),
        ("iat an hour ago", "logout_token_stale", edited { $0["iat"] = .number(Date().timeIntervalSince1970 - 3600) }),
        ("iat in an hour", "logout_token_stale", edited { $0["iat"] = .number(Date().timeIntervalSince1970 + 3600) }),
        ("no iat", "logout_token_malformed", edited { $0["iat"] = nil }),
        ("iat as text", "logout_token_malformed", edited { $0["iat"] = .string("now") }),
        ("expired", "logout_token_expired", edited { $0["exp"] = .number(Date().timeIntervalSince1970 - 10) }),
        ("no jti", "logout_token_malformed", edited { $0["jti"] = nil }),
        ("no events", "logout_token_event_missing", edited { $0["events"] = nil }),
        ("events without the logout event", "logout_token_event_missing", edited { $0["events"] = .object(["other": .object([:])]) }),
        ("the event not an object", "logout_token_event_missing", edited { $0["events"] = .object([event: .string("yes")]) }),
        (
            "neither sid nor sub", "logout_token_subject_missing",
            edited {
                $0["sid"] = nil
                $0["sub"] = nil
            }
        ),
        ("a numeric sub", "logout_token_malformed", edited { $0["sub"] = .number(42) }),
        ("a nonce", "logout_token_nonce_present", edited { $0["nonce"] = .string("n") }),
        ("typ JWT", "logout_token_type_mismatch", edited({ _ in }, header: ["typ": .string("JWT")])),
        ("not a JWS", "logout_token_malformed", { _ in "not-a-token" }),
    ]

    @Test("every failed check refuses the token", arguments: refusals.indices)
    func refused(_ index: Int) async {
        let (name, code, make) = Self.refusals[index]
        #expect(await Self.refusal(make) == code, "\(name)")
    }
}
