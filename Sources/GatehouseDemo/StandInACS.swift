import Crypto
public import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
public import Logging
import NIOCore

/// An Azure-ACS-like sign-in site on loopback: `GET /login` shows a form, `POST /login` sets a session
/// cookie and redirects to `/result`, whose page calls `window.external.Notify(json)` on load with an
/// SWT inside a `BinarySecurityToken` (docs/providers/acs.md), exactly as ACS's javascriptnotify result page.
/// `/result` needs the session cookie, so it only works through a gateway that keeps the cookie jar.
public final class StandInACS: StandInLoopbackServer {
    public let realm: String
    /// The token signing key, base64 (what `signing_key` is configured with).
    public let signingKeyBase64: String
    /// The listener the site runs on.
    public let loopback: StandInLoopback<StandInACS>

    public init(realm: String, signingKeyBase64: String = "N4QeKa3c062VBjnVK6fb+rnwURkcwGXh7EoNK34n0uM=", port: Int = 0, logger: Logger? = nil) {
        self.realm = realm
        self.signingKeyBase64 = signingKeyBase64
        self.loopback = StandInLoopback(port: port, logger: logger, label: "gatehouse.demo.acs") { $0.makeRouter() }
    }

    /// The SWT `Issuer` (configured as `issuer`).
    public var issuer: String { baseURL + "/" }
    public var loginURL: String { baseURL + "/login" }

    /// An SWT for `email`, signed with the key, lowercase escapes like ACS.
    public func token(email: String, expiresOn: Date = Date().addingTimeInterval(3600)) -> String {
        let pairs = [
            ("http://schemas.xmlsoap.org/ws/2005/05/identity/claims/nameidentifier", "nid-" + email),
            ("http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress", email),
            ("http://schemas.microsoft.com/accesscontrolservice/2010/07/claims/identityprovider", "StandIn"),
            ("Audience", realm), ("ExpiresOn", String(Int(expiresOn.timeIntervalSince1970))), ("Issuer", issuer),
        ]
        let signed = pairs.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        let key = SymmetricKey(data: Data(base64Encoded: signingKeyBase64) ?? Data())
        let mac = Data(HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: key)).base64EncodedString()
        return signed + "&HMACSHA256=" + Self.encode(mac)
    }

    /// The string the result page hands to Notify.
    public func notifyJSON(email: String) -> String {
        let swt = token(email: email)
        let xml =
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><wsse:BinarySecurityToken ValueType=\"http://schemas.xmlsoap.org/ws/2009/11/swt-token-profile-1.0\" EncodingType=\"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary\" xmlns:wsse=\"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd\">\(Data(swt.utf8).base64EncodedString())</wsse:BinarySecurityToken>"
        let now = Int(Date().timeIntervalSince1970)
        let object: [String: Any] = [
            "appliesTo": realm, "context": "", "created": now, "expires": now + 3600, "securityToken": HTMLEscaping.escape(xml),
            "tokenType": "http://schemas.xmlsoap.org/ws/2009/11/swt-token-profile-1.0",
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || [0x2D, 0x2E, 0x5F, 0x7E].contains(byte)
            {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += String(format: "%%%02x", byte)
            }
        }
        return out
    }

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/login") { _, _ in
            Response.html(
                """
                <!DOCTYPE html><html><head><title>Sign in (ACS stand-in)</title></head><body>
                <h1>Sign in</h1><form method="post" action="/login"><input name="email" id="email" value="alice@acs.demo.test">
                <button type="submit" id="signin">Sign in</button></form></body></html>
                """)
        }
        router.post("/login") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 65_536)
            let form = Dictionary(FormEncoding.decode(String(buffer: body)), uniquingKeysWith: { first, _ in first })
            let email = form["email"].flatMap { $0.isEmpty ? nil : $0 } ?? "alice@acs.demo.test"
            var headers = HTTPFields()
            headers[.location] = "/result"
            headers[.setCookie] = "acs_session=\(Self.encode(email)); Path=/; HttpOnly"
            return Response(status: .found, headers: headers)
        }
        router.get("/result") { request, _ in
            let cookie = request.headers[.cookie] ?? ""
            guard
                let value = cookie.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: {
                    $0.hasPrefix("acs_session=")
                })
            else {
                return Response.html("<html><head><title>No session</title></head><body>Sign in first.</body></html>", status: .unauthorized)
            }
            let email = String(value.dropFirst("acs_session=".count)).removingPercentEncoding ?? "alice@acs.demo.test"
            let json = self.notifyJSON(email: email).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
            return Response.html(
                """
                <!DOCTYPE html><html><head><title>Signing in…</title>
                <script type="text/javascript">try { window.external.Notify('\(json)'); } catch (err) { document.title = 'Error ACS50021: windows.external.Notify is not registered.'; }</script>
                </head><body>Working…</body></html>
                """)
        }
        return router
    }
}
