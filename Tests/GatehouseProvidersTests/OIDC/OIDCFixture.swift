import Foundation
import GatehouseCore
import GatehouseDemo
import GatehouseProviders

/// An `oidc` provider scripted with FakeTransport; ID tokens minted by an unstarted stand-in.
struct OIDCFixture {
    let idp = StandInOIDCProvider()
    let transport = FakeTransport()
    let provider: OIDCProvider
    /// Changes the stand-in's discovery document before it is served.
    let editDiscovery: @Sendable (inout [String: JSONValue]) -> Void
    static let nonce = "nonce-1"

    init(
        configure: (inout OIDCProvider.Configuration) -> Void = { _ in },
        editDiscovery: @escaping @Sendable (inout [String: JSONValue]) -> Void = { _ in }
    ) {
        self.editDiscovery = editDiscovery
        var configuration = OIDCProvider.Configuration(issuer: idp.issuer, clientID: idp.clientID, clientSecret: "s3cret")
        configure(&configuration)
        provider = OIDCProvider(
            descriptor: ProviderDescriptor(id: "oidc", kind: "oidc"), configuration: configuration,
            context: ProviderContext(transport: transport, publicURL: "http://gateway.test"))
    }

    static func json(_ object: [String: JSONValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(JSONValue.object(object))) ?? Data(), as: UTF8.self)
    }

    func discovery() -> FakeTransport.Reply {
        var document = idp.discoveryDocument
        editDiscovery(&document)
        return .json(Self.json(document))
    }
    func jwks() -> FakeTransport.Reply { .json(Self.json(idp.jwks)) }

    func tokenResponse(idToken: String, accessToken: String = "at-1") -> FakeTransport.Reply {
        .json(
            Self.json([
                "access_token": .string(accessToken), "token_type": .string("Bearer"), "expires_in": .number(300),
                "refresh_token": .string("rt-1"), "id_token": .string(idToken),
            ]))
    }

    func userinfo(user: String = "alice") -> FakeTransport.Reply { .json(Self.json(StandInOIDCProvider.profile(of: user))) }

    var transaction: LoginTransaction {
        LoginTransaction(
            provider: "oidc", state: "st", codeVerifier: PKCE.makeVerifier(), nonce: Self.nonce,
            callbackURL: "http://gateway.test/v1/auth/oidc/callback", createdAt: Date())
    }

    var callback: [String: String] { ["code": "c1", "state": "st", "iss": idp.issuer] }

    /// Scripts a full login with `fault` and runs it.
    /// - Parameter userinfoReply: what the userinfo endpoint answers (alice's profile by default).
    func login(
        fault: StandInOIDCFault = .none, callback: [String: String]? = nil, userinfoReply: FakeTransport.Reply? = nil
    ) async throws -> LoginResult {
        idp.setFault(fault)
        let token = idp.idToken(for: "alice", nonce: Self.nonce)
        idp.setFault(.none)
        for reply in [discovery(), tokenResponse(idToken: token), jwks(), userinfoReply ?? userinfo()] { transport.enqueue(reply) }
        return try await provider.completeLogin(callback: callback ?? self.callback, transaction: transaction)
    }

    /// The problem code of a refused login.
    func refusal(fault: StandInOIDCFault = .none, callback: [String: String]? = nil, userinfoReply: FakeTransport.Reply? = nil) async -> String? {
        do {
            _ = try await login(fault: fault, callback: callback, userinfoReply: userinfoReply)
            return nil
        } catch ProviderError.rejected(let code, _) {
            return code
        } catch {
            return "\(error)"
        }
    }
}
