import Foundation

/// A verified assertion: whose it is, for whom, from which IdP, until when (the verifier's `okay` answer).
struct BrowserIDVerification: Sendable, Equatable {
    let email: String
    /// The assertion's `aud`, as written.
    let audience: String
    let issuer: String
    /// The assertion's `exp`.
    let expires: Date
}
