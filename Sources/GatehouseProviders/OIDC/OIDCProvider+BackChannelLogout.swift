public import GatehouseCore

extension OIDCProvider: BackChannelLogoutProvider {
    public var acceptsBackChannelLogout: Bool { configuration.backchannelLogout }

    /// Checks a logout token against the discovered issuer and key set (``OIDCLogoutTokenValidator``).
    public func verifyLogoutToken(_ token: String) async throws -> LogoutToken {
        let metadata = try await discovery.current()
        return try await OIDCLogoutTokenValidator(idTokens: validator, clock: context.clock).validate(token, metadata: metadata)
    }
}
