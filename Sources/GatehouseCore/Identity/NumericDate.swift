/// A NumericDate claim (`exp`, `iat`, `nbf`, `auth_time`; RFC 7519 §2): a JSON number of seconds since the
/// epoch, and nothing else.
///
/// ``JSONValue/doubleValue`` also reads strings (`expires_in` comes as `"3600"` from some servers), and
/// `Double("inf")` is infinity: read that way, `"exp": "inf"` would be a token that never expires and
/// `"exp": "9999999999"` one whose issuer never wrote a date. A claim of the wrong type is therefore not
/// "absent" but malformed, and every reader refuses the token.
public enum NumericDate: Sendable, Equatable {
    /// The claim is not in the set.
    case absent
    /// A finite JSON number.
    case seconds(Double)
    /// Present but not a finite JSON number (a string, a boolean, an object…).
    case malformed

    /// The claim `name` of `claims`.
    public init(_ name: String, in claims: [String: JSONValue]) {
        switch claims[name] {
        case nil: self = .absent
        case .number(let value)? where value.isFinite: self = .seconds(value)
        case .integer(let value)?: self = .seconds(Double(value))
        default: self = .malformed
        }
    }

    /// The NumericDate claims a token or an introspection answer may carry.
    public static let claimNames = ["exp", "iat", "nbf", "auth_time"]

    /// The first of ``claimNames`` that `claims` holds as anything but a finite JSON number; nil when none.
    public static func malformedClaim(in claims: [String: JSONValue]) -> String? {
        claimNames.first { NumericDate($0, in: claims) == .malformed }
    }

    /// The seconds, when the claim is a number.
    public var seconds: Double? {
        if case .seconds(let value) = self { return value }
        return nil
    }
}
