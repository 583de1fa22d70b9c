import Crypto
import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

enum ACSVectors {
    static let keyBase64 = "N4QeKa3c062VBjnVK6fb+rnwURkcwGXh7EoNK34n0uM="
    static let key = Data(base64Encoded: keyBase64)!
    static let token =
        "http%3A%2F%2Fschemas.xmlsoap.org%2Fws%2F2005%2F05%2Fidentity%2Fclaims%2Femailaddress=alice%40example.com&http%3A%2F%2Fschemas.microsoft.com%2Faccesscontrolservice%2F2010%2F07%2Fclaims%2Fidentityprovider=Google&Audience=http%3A%2F%2Flocalhost%3A8080%2F&ExpiresOn=1700000000&Issuer=https%3A%2F%2Fgatehouse-test.accesscontrol.windows.net%2F&HMACSHA256=zi0mE6he6q1zAwrQJk6kNTkpc%2FleK8BuQJ7XSBWRYRs%3D"
    static let audience = "http://localhost:8080/"
    static let issuer = "https://gatehouse-test.accesscontrol.windows.net/"
    static let before = Date(timeIntervalSince1970: 1_699_999_000)
    static let after = Date(timeIntervalSince1970: 1_700_000_100)

    /// The Notify JSON ACS would hand over for `swt`.
    static func notify(_ swt: String, expires: Int = 1_700_000_000) -> String {
        let xml =
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><wsse:BinarySecurityToken wsu:Id=\"uuid:1\" ValueType=\"http://schemas.xmlsoap.org/ws/2009/11/swt-token-profile-1.0\" EncodingType=\"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary\" xmlns:wsu=\"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd\" xmlns:wsse=\"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd\">\(Data(swt.utf8).base64EncodedString())</wsse:BinarySecurityToken>"
        let escaped = xml.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;"
        ).replacingOccurrences(of: "\"", with: "&quot;")
        let object: [String: Any] = [
            "appliesTo": audience, "context": NSNull(), "created": expires - 600, "expires": expires, "securityToken": escaped,
            "tokenType": "http://schemas.xmlsoap.org/ws/2009/11/swt-token-profile-1.0",
        ]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }
}

@Suite struct ACSSWTTests {
    func validate(
        _ token: String, now: Date = ACSVectors.before, audience: String = ACSVectors.audience, issuer: String = ACSVectors.issuer,
        key: Data = ACSVectors.key
    ) -> String {
        do {
            _ = try SimpleWebToken.validate(token, key: key, issuer: issuer, audiences: [audience], now: now, clockSkew: 30)
            return "ok"
        } catch {
            return error.code
        }
    }

    @Test("the §7.5 vector validates, with its claims")
    func vector() throws {
        let swt = try SimpleWebToken.validate(
            ACSVectors.token, key: ACSVectors.key, issuer: ACSVectors.issuer, audiences: [ACSVectors.audience], now: ACSVectors.before, clockSkew: 30)
        #expect(swt.audience == ACSVectors.audience)
        #expect(swt.issuer == ACSVectors.issuer)
        #expect(swt.expiresOn == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(swt.claims["http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"] == "alice@example.com")
        #expect(swt.claims["http://schemas.microsoft.com/accesscontrolservice/2010/07/claims/identityprovider"] == "Google")
    }

    @Test("each refusal has its own code")
    func refusals() {
        #expect(validate(ACSVectors.token) == "ok")
        #expect(validate(ACSVectors.token.replacingOccurrences(of: "alice", with: "mallory")) == "invalid_signature")
        #expect(validate(ACSVectors.token, key: Data(repeating: 7, count: 32)) == "invalid_signature")
        #expect(validate(ACSVectors.token, now: ACSVectors.after) == "token_expired")
        #expect(validate(ACSVectors.token, audience: "http://localhost:9090/") == "audience_mismatch")
        #expect(validate(ACSVectors.token, issuer: "https://other.accesscontrol.windows.net/") == "issuer_mismatch")
        let unsigned = String(ACSVectors.token[..<ACSVectors.token.range(of: "&HMACSHA256=")!.lowerBound])
        #expect(validate(unsigned) == "missing_signature")
        #expect(validate("a=1&b=2") == "missing_signature")
        #expect(validate("garbage") == "malformed_token")
        #expect(validate("\u{00e9}t\u{00e9}") == "malformed_token")
        #expect(validate("%%%&HMACSHA256=abc") == "malformed_token")
        #expect(validate("") == "malformed_token")
        #expect(validate("a b&HMACSHA256=x") == "malformed_token")
        #expect(validate(ACSVectors.token + "&HMACSHA256=zi0mE6he6q1zAwrQJk6kNTkpc%2FleK8BuQJ7XSBWRYRs%3D") == "malformed_token")
    }

    @Test("lowercase escapes in the signature decode the same (constant-time compare of bytes, not strings)")
    func lowercaseEscapes() {
        #expect(
            validate(ACSVectors.token.replacingOccurrences(of: "%2FleK", with: "%2fleK").replacingOccurrences(of: "RYRs%3D", with: "RYRs%3d")) == "ok"
        )
    }

    @Test("duplicate names are refused even when signed")
    func duplicates() {
        let token = SimpleWebToken.sign(
            [("Audience", ACSVectors.audience), ("Audience", "http://evil/"), ("ExpiresOn", "1700000000"), ("Issuer", ACSVectors.issuer)],
            key: ACSVectors.key)
        #expect(validate(token) == "malformed_token")
    }

    @Test("sign builds tokens the validator accepts, with lowercase escapes like ACS")
    func roundTrip() {
        let token = SimpleWebToken.sign(
            [("nameid", "u1"), ("Audience", ACSVectors.audience), ("ExpiresOn", "1700000000"), ("Issuer", ACSVectors.issuer)], key: ACSVectors.key)
        #expect(token.contains("http%3a%2f%2f"))
        #expect(validate(token) == "ok")
    }

    @Test("Notify JSON: HTML-unescape, prolog, BinarySecurityToken root text, base64")
    func notify() throws {
        let payload = try ACSNotifyPayload(json: ACSVectors.notify(ACSVectors.token))
        #expect(payload.token == ACSVectors.token)
        #expect(payload.expires == 1_700_000_000)
        #expect(payload.appliesTo == ACSVectors.audience)
    }

    @Test("Notify payloads that are not what ACS sends are refused as malformed")
    func notifyRefusals() {
        func code(_ text: String) -> String {
            do {
                _ = try ACSNotifyPayload(json: text)
                return "ok"
            } catch { return error.code }
        }
        #expect(code("not json") == "malformed_token")
        #expect(code("{\"securityToken\": 5}") == "malformed_token")
        #expect(code("{\"securityToken\": \"&lt;saml:Assertion&gt;x&lt;/saml:Assertion&gt;\"}") == "unsupported_token_type")
        #expect(code("{\"securityToken\": \"&lt;wsse:BinarySecurityToken&gt;!!!&lt;/wsse:BinarySecurityToken&gt;\"}") == "malformed_token")
        #expect(code("{\"securityToken\": \"&lt;BinarySecurityToken&gt;QQ==&lt;/BinarySecurityToken&gt;&lt;x/&gt;\"}") == "malformed_token")
    }
}
