import GatehouseCore

extension GatewayConfiguration {
    /// What a configuration that was read allows but most likely did not mean, each where it is set.
    /// - Parameters:
    ///   - configuration: the configuration as read.
    ///   - root: the file's tree with the environment's values in place, to find where a key is set.
    static func warnings(_ configuration: GatewayConfiguration, root: ConfigNode) -> [ConfigError] {
        var warnings: [ConfigError] = []
        if configuration.publicURL.lowercased().hasPrefix("https://"), !configuration.sessions.cookie.secure {
            let message =
                "'sessions.cookie.secure' is false while 'public_url' is https (\(configuration.publicURL)): browsers would also send the session cookie over plain http; set it to true (with the cookie name \"__Host-gatehouse_session\")"
            warnings.append(place(message, at: ["sessions", "cookie", "secure"], in: root, file: configuration.file))
        }
        return warnings
    }

    /// A warning at the node of `path` in `root` (its file and line, or its variable), else at the top of `file`.
    private static func place(_ message: String, at path: [String], in root: ConfigNode, file: String?) -> ConfigError {
        location(of: path, in: root, file: file, default: "environment").error(message)
    }
}
