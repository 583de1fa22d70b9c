import HTTPTypes

extension HTTPField.Name {
    /// `Pragma: no-cache` goes with `Cache-Control: no-store` on token responses (RFC 6749 §5.1).
    static var pragma: Self { Self("Pragma")! }
}
