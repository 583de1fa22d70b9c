import Foundation
import GatehouseCore

/// Reads an RFC 6749 §5.1 token response into a ``Credential``.
enum OAuth2TokenResponse {
    /// Members that carry tokens or token metadata: never identity claims, never shown.
    static let tokenFields: Set<String> = ["access_token", "refresh_token", "id_token", "token_type", "expires_in", "scope"]

    /// - Parameters:
    ///   - previous: on refresh, the credential being replaced: its refresh token is kept when none comes back.
    static func credential(from json: JSONValue, previous: Credential?, requestedScopes: [String], now: Date) throws -> Credential {
        guard let accessToken = json["access_token"]?.stringValue, !accessToken.isEmpty else {
            throw ProviderError.invalidResponse("The token response has no access_token.")
        }
        // Only bearer tokens are attached as such; a sender-constrained type (DPoP, MAC) would be misused.
        let tokenType = json["token_type"]?.stringValue ?? previous?.tokenType ?? "Bearer"
        guard tokenType.caseInsensitiveCompare("bearer") == .orderedSame else {
            throw ProviderError.invalidResponse("Unsupported token_type '\(tokenType)'.")
        }
        let expiresAt = json["expires_in"]?.doubleValue.map { now.addingTimeInterval($0) }
        let scope =
            json["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) }
            ?? previous?.scope ?? requestedScopes
        var extras: [String: String] = previous?.extras ?? [:]
        for (key, value) in json.objectValue ?? [:] where key != "access_token" && key != "refresh_token" {
            if let text = value.stringValue { extras[key] = text }
        }
        return Credential(
            accessToken: accessToken,
            tokenType: tokenType,
            refreshToken: json["refresh_token"]?.stringValue ?? previous?.refreshToken,
            expiresAt: expiresAt,
            issuedAt: now,
            scope: scope,
            extras: extras
        )
    }
}
