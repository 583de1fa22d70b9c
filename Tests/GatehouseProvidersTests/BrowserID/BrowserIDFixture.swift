import Foundation
import GatehouseCore
import GatehouseDemo
import Testing

@testable import GatehouseProviders

/// Keys, a frozen clock and an assertion minter for the `browserid` tests.
enum BrowserIDFixture {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let nowMilliseconds = now.timeIntervalSince1970 * 1000
    static let audience = "https://rp.example.test"
    static let issuerKey = BrowserIDSigningKey.dsa128(seed: "example.com")
    static let userKey = BrowserIDSigningKey.dsa128(seed: "alice@example.com")
    static let otherKey = BrowserIDSigningKey.dsa128(seed: "evil.example")

    /// A support document publishing `key`.
    static func supportDocument(_ key: BrowserIDSigningKey) -> String {
        let members = key.publicKey.map { "\"\($0.key)\":\"\($0.value)\"" }.sorted().joined(separator: ",")
        return "{\"public-key\":{\(members)},\"authentication\":\"/sign_in\",\"provisioning\":\"/provision\"}"
    }

    static func keyJSON(_ key: BrowserIDSigningKey) -> JSONValue {
        .object(key.publicKey.mapValues(JSONValue.string))
    }

    /// A backed assertion; every part can be changed to make it invalid.
    static func mint(
        email: String = "alice@example.com", audience: String = audience, issuer: String = "example.com",
        issuerKey: BrowserIDSigningKey = issuerKey, userKey: BrowserIDSigningKey = userKey,
        certificateExpires: Double = nowMilliseconds + 60_000, assertionExpires: Double = nowMilliseconds + 60_000,
        certificateExtras: [String: JSONValue] = [:], legacy: Bool = false
    ) -> String {
        var certificate: [String: JSONValue] = [
            "iss": .string(issuer), "exp": .number(certificateExpires), "principal": .object(["email": .string(email)]),
            "public-key": keyJSON(userKey),
        ]
        certificate.merge(certificateExtras) { _, new in new }
        let certificateJWS = issuerKey.compactJWS(certificate)
        let assertionJWS = userKey.compactJWS(["aud": .string(audience), "exp": .number(assertionExpires)])
        if legacy {
            let bundle = "{\"certificates\":[\"\(certificateJWS)\"],\"assertion\":\"\(assertionJWS)\"}"
            return Base64URL.encode(Data(bundle.utf8))
        }
        return "\(certificateJWS)~\(assertionJWS)"
    }

    static func configuration(
        audiences: [String] = [audience], pinned: [String: String] = ["example.com": supportDocument(issuerKey)],
        fetch: Bool = false, secondaries: [String] = [], skew: TimeInterval = 30
    ) -> BrowserIDProvider.Configuration {
        BrowserIDProvider.Configuration(
            audiences: audiences.map { BrowserIDAudience(configured: $0)! }, pinnedSupportDocuments: pinned,
            fetchSupportDocuments: fetch, trustedSecondaries: secondaries, clockSkew: skew)
    }

    static func provider(
        _ configuration: BrowserIDProvider.Configuration = configuration(), transport: FakeTransport = FakeTransport(), now: Date = now
    ) throws -> BrowserIDProvider {
        let context = ProviderContext(transport: transport, clock: TimeSource { now }, publicURL: "https://gate.example.test")
        return try BrowserIDProvider(descriptor: ProviderDescriptor(id: "persona", kind: "browserid"), configuration: configuration, context: context)
    }

    /// The stable code of the refusal, or nil when the assertion verified.
    static func refusal(_ provider: BrowserIDProvider, _ assertion: String, audience: String = "") async -> String? {
        do {
            _ = try await provider.verifyAssertion(assertion, audience: audience)
            return nil
        } catch ProviderError.rejected(let code, _) {
            return code
        } catch {
            return "other: \(error)"
        }
    }

    /// The refusal's code and description.
    static func rejection(_ provider: BrowserIDProvider, _ assertion: String) async -> (code: String, reason: String)? {
        do {
            _ = try await provider.verifyAssertion(assertion, audience: "")
            return nil
        } catch ProviderError.rejected(let code, let reason) {
            return (code, reason)
        } catch {
            return ("other", "\(error)")
        }
    }

    /// `StandInBrowserIDIdP.Signer` from a signing key.
    static func signer(_ key: BrowserIDSigningKey) -> StandInBrowserIDIdP.Signer {
        .init(algorithm: key.algorithm, publicKey: key.publicKey, sign: key.sign)
    }
}
