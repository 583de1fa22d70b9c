/// The 200 body of `POST /v1/device/authorize` (RFC 8628 §3.2): written by the gateway, read by
/// `gatehouse login --device`.
public struct DeviceCodeAnswer: Sendable, Codable, Equatable {
    /// For the device only: what it polls the token endpoint with.
    public var deviceCode: String
    /// For the person: `XXXX-XXXX`, typed at ``verificationURI``.
    public var userCode: String
    public var verificationURI: String
    /// ``verificationURI`` with the user code in its query.
    public var verificationURIComplete: String?
    public var expiresIn: Int
    /// Seconds between polls (RFC 8628: 5 when absent).
    public var interval: Int?

    public init(deviceCode: String, userCode: String, verificationURI: String, verificationURIComplete: String?, expiresIn: Int, interval: Int?) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
    }

    enum CodingKeys: String, CodingKey {
        case deviceCode = "device_code"
        case userCode = "user_code"
        case verificationURI = "verification_uri"
        case verificationURIComplete = "verification_uri_complete"
        case expiresIn = "expires_in"
        case interval
    }
}
