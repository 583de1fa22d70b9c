/// The form of the session tokens the gateway issues: `gths_` followed by 32 random bytes in base64url
/// (48 characters in all), the cookie's value and the `session_token` of a grant alike.
///
/// The prefix is for secret scanners (GitHub's push protection, gitleaks, trufflehog), which recognise a leaked
/// token by a fixed prefix as they do GitHub's `ghp_` or Slack's `xoxb-`: `gths_[A-Za-z0-9_-]{43}`. It also
/// lets the gateway tell its own tokens from a provider's opaque access tokens before asking anyone: a value
/// of this form is only ever looked up in the session store, never sent to a provider's introspection
/// endpoint, so a leaked or ended session token is not handed to a third party.
///
/// Tokens issued before the prefix (43 characters, no prefix) keep working until their sessions end: the store
/// keeps only a token's hash, whatever its form. Their shape is not withheld from introspection, because
/// providers issue opaque tokens of that very shape (Doorkeeper's are 32 random bytes in base64url too).
public enum SessionToken {
    /// `gths_`: "Gatehouse session", and no other issuer's prefix that scanners know.
    public static let prefix = "gths_"

    /// A new session token.
    public static func make() -> String { prefix + RandomToken.make() }

    /// Whether `value` claims to be a Gatehouse session token (it starts with ``prefix``), whatever follows: such a
    /// value is the gateway's to judge alone, ended, altered or not.
    public static func isPrefixed(_ value: some StringProtocol) -> Bool {
        value.utf8.starts(with: prefix.utf8)
    }
}
