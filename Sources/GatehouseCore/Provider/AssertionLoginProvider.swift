/// A provider whose users prove themselves with a posted assertion (BrowserID).
public protocol AssertionLoginProvider: AuthProvider {
    /// Verifies the assertion for the audience; throws ``ProviderError`` when it is not valid.
    func verifyAssertion(_ assertion: String, audience: String) async throws -> LoginResult
}
