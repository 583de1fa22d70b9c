import Foundation
public import GatehouseCore

/// A legacy site whose success page sets an `oauth_token` cookie or writes the token into `<title>`.
/// Captured tokens (by the gateway's login-page proxy, or posted by a client) are validated by the
/// configured probe call, whose JSON answer is the identity.
public struct CaptureProvider: LoginPageProvider {
    public let descriptor: ProviderDescriptor
    public let configuration: Configuration
    let context: ProviderContext

    public init(descriptor: ProviderDescriptor, configuration: Configuration, context: ProviderContext) {
        self.descriptor = descriptor
        self.configuration = configuration
        self.context = context
    }

    public var features: ProviderFeatures { ProviderFeatures(userinfo: true) }
    public var loginURL: String { configuration.loginURL }
    public var allowedOrigins: [String] { configuration.allowedOrigins }

    // MARK: Capture

    public func capture(url: String, status: Int, setCookies: [String], body: String?) -> CaptureOutcome? {
        // A refusal in the title ends the login wherever the site shows it (docs/providers/capture.md).
        if let body, let title = Self.title(of: body), let code = Self.deniedCode(fromTitle: title) {
            return .denied(code: code)
        }
        guard (200..<300).contains(status), Self.matches(url, pattern: configuration.successURL) else { return nil }
        switch configuration.source {
        case .cookie(let name):
            for line in setCookies.reversed() {
                let pair = line.split(separator: ";", maxSplits: 1).first.map(String.init) ?? line
                guard let equals = pair.firstIndex(of: "=") else { continue }
                guard pair[..<equals].trimmingCharacters(in: .whitespaces) == name else { continue }
                let raw = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                let value = raw.removingPercentEncoding ?? raw
                if !value.isEmpty { return .token(value) }
            }
            return nil
        case .title(let prefix, let parameter):
            guard let body, let title = Self.title(of: body) else { return nil }
            return Self.token(fromTitle: title, prefix: prefix, parameter: parameter).map(CaptureOutcome.token)
        }
    }

    /// `*` matches any run of characters; everything else literally. A pattern without `*` names a
    /// page: it matches that page whatever its query (a legacy site adds `?lang=…`).
    static func matches(_ url: String, pattern: String) -> Bool {
        let pieces = pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
        guard pieces.count > 1 else {
            let page = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
            return url == pattern || (!pattern.contains("?") && page == pattern)
        }
        guard url.hasPrefix(pieces[0]) else { return false }
        var rest = Substring(url.dropFirst(pieces[0].count))
        for (index, piece) in pieces.dropFirst().enumerated() {
            let isLast = index == pieces.count - 2
            if isLast { return piece.isEmpty || rest.hasSuffix(piece) }
            guard !piece.isEmpty else { continue }
            guard let range = rest.range(of: piece) else { return false }
            rest = rest[range.upperBound...]
        }
        return true
    }

    static func title(of html: String) -> String? {
        guard let open = html.range(of: "<title", options: .caseInsensitive),
            let openEnd = html[open.upperBound...].firstIndex(of: ">"),
            let close = html[openEnd...].range(of: "</title", options: .caseInsensitive)
        else { return nil }
        return htmlUnescape(String(html[html.index(after: openEnd)..<close.lowerBound]))
    }

    static func htmlUnescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&apos;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// `Denied error=access_denied` → `access_denied` (a code of OAuth's characters; anything else is `access_denied`).
    static func deniedCode(fromTitle title: String) -> String? {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.lowercased().hasPrefix("denied ") || trimmed.lowercased() == "denied" else { return nil }
        let rest = trimmed.dropFirst("denied".count).trimmingCharacters(in: .whitespaces)
        let error = FormEncoding.decode(rest).first { $0.0 == "error" }?.1 ?? ""
        let isCode = !error.isEmpty && error.count <= 64 && error.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        return isCode ? error : "access_denied"
    }

    /// `Success oauth_token=…&state=…` → the parameter's value; `Denied …` or anything else → nil.
    static func token(fromTitle title: String, prefix: String, parameter: String) -> String? {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.lowercased().hasPrefix(prefix.lowercased()) else { return nil }
        let rest = trimmed.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)
        for pair in rest.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            let name = parts[0].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? parts[0]
            if name == parameter {
                let value = parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? parts[1]
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    // MARK: Validation

    public func validateToken(_ token: String) async throws -> LoginResult {
        let token = token.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, token.utf8.count <= 8192, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ProviderError.rejected(code: "malformed_token", description: "the token is empty, too long or not printable ASCII")
        }
        let now = context.clock.now()
        let credential = Credential(accessToken: token, tokenType: "Bearer", issuedAt: now)
        var outgoing = OutgoingRequest(url: configuration.probe.url, headers: [("Accept", "application/json")])
        configuration.probe.authentication.attach(credential, to: &outgoing)
        let response = try await context.http.send(
            outgoing, unreachable: "the probe call could not reach the site", serverError: { "the probe call answered \($0)" })
        switch response.status {
        case 200:
            break
        case 401, 403:
            throw ProviderError.rejected(code: "invalid_token", description: "the site does not accept the captured token")
        default:
            throw ProviderError.rejected(code: "invalid_token", description: "the probe call answered \(response.status)")
        }
        let claims = try ProviderHTTP.jsonObject(of: response, otherwise: "the probe answer is not a JSON object")
        var identity = descriptor.claims.identity(from: .object(claims))
        if identity == nil {
            for fallback in ["id", "user_id", "username", descriptor.claims.email] where identity == nil {
                var mapping = descriptor.claims
                mapping.subject = fallback
                identity = mapping.identity(from: .object(claims))
            }
        }
        guard let identity else { throw ProviderError.invalidResponse("the probe answer has no '\(descriptor.claims.subject)' for the subject") }
        return LoginResult(identity: identity, credential: credential)
    }
}
