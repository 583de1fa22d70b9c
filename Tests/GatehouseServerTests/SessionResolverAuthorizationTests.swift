import Foundation
import GatehouseCore
import GatehouseStore
import Testing

@testable import GatehouseServer

/// How ``SessionResolver/presented(authorization:cookies:csrf:method:proofs:target:)`` reads `Authorization`: the
/// scheme, one space, the token (trimmed), the same as `split(separator: " ", maxSplits: 1)` reads an ASCII value
/// (and any whose spaces stand alone as characters) — spaces before the scheme skipped, a value without a token refused.
struct SessionResolverAuthorizationTests {
    static let values = [
        "Bearer tok", "bearer tok", "BEARER tok", "DPoP tok", "dpop tok", "  Bearer tok", "Bearer   tok  ", "Bearer a b", "Bearer",
        "Bearer ", "Bearer  ", " ", "   ", "", "Basic dXNlcjpwYXNz", "Bearer\ttok", "Bearertok", "DPoP\u{A0}tok", "Bearer \ttok\t",
    ]

    /// The reading by `split`, as it was written before: the presentation and token, `nil` when refused.
    static func expected(_ value: String) -> (SessionResolver.Presentation, String)? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let token = String(ASCII.trimmed(parts[1]))
        if ASCII.equalsIgnoringCase(parts[0], "bearer") { return (.bearer, token) }
        if ASCII.equalsIgnoringCase(parts[0], "dpop") { return (.dpop, token) }
        return nil
    }

    @Test(arguments: values)
    func theSchemeAndTokenAreReadAsBefore(_ value: String) throws {
        let (resolver, _, _) = try DPoPCredentialMemoTests.resolver(TestClock())
        let read = Result {
            try resolver.presented(
                authorization: value, cookies: [], csrf: nil, method: "GET", proofs: ["p"], target: DPoPVerifierTests.target)
        }
        if let (presentation, token) = Self.expected(value) {
            let presented = try #require(try read.get())
            #expect(presented.presentation == presentation && presented.token == token && presented.authorization == value)
            #expect(presented.proofs == (presentation == .dpop ? ["p"] : []))
        } else {
            #expect(throws: GatehouseError.self) { try read.get() }
        }
    }
}
