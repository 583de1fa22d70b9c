import Foundation
import GatehouseCore

/// The `state` a sign-out sends through the provider's browser logout, which brings it back to
/// `/v1/sign-out/done`: where to return to, and until when, sealed with the gateway's sealing keys.
///
/// Sealed (AES-GCM, ``CredentialSealer``) rather than stored: the provider's redirect may arrive at another
/// instance, the value cannot be forged or altered, and the keys' rotation keeps states in flight valid.
/// It is not single use, so it is short-lived instead; a replay within its lifetime only redirects again
/// to a `return_to` the gateway accepted.
struct SignOutState: Codable, Sendable, Equatable {
    /// Tells a sign-out state from anything else sealed with the same keys.
    static let purpose = "gatehouse sign-out"

    var purpose = Self.purpose
    var returnTo: String
    var expiresAt: Date

    init(returnTo: String, expiresAt: Date) {
        self.returnTo = returnTo
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case purpose = "p"
        case returnTo = "r"
        case expiresAt = "e"
    }

    /// The value for the `state` parameter (base64url, URL-safe).
    func sealed(with sealer: CredentialSealer) throws -> String {
        Base64URL.encode(try sealer.seal(json: self))
    }

    /// The state `text` carries, when it was sealed by a gateway with these keys, as a sign-out state, and
    /// has not expired; nil for anything else.
    static func open(_ text: String, with sealer: CredentialSealer, now: Date) -> SignOutState? {
        // A sealed state is a few hundred characters; anything much longer is not one.
        guard text.utf8.count <= 8192, let data = Base64URL.decode(text),
            let state = try? sealer.open(json: SignOutState.self, from: data),
            state.purpose == purpose, state.expiresAt > now
        else { return nil }
        return state
    }
}
