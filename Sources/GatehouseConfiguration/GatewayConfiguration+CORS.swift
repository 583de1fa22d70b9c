import Foundation
import GatehouseCore

extension GatewayConfiguration {
    /// `cors:` — browser origins allowed to call the API cross-origin.
    public struct CORS: Sendable, Equatable {
        /// Exact origins (`https://app.example.com`, no path); empty allows none.
        public var allowedOrigins: [String]

        /// - Parameter allowedOrigins: none by default.
        public init(allowedOrigins: [String] = []) {
            self.allowedOrigins = allowedOrigins
        }

        init(_ map: ConfigMap) throws {
            self.init()
            for entry in try map.locatedStrings("allowed_origins") ?? [] {
                guard Self.isOrigin(entry.value) else {
                    throw ConfigError(
                        at: entry.node, "'\(map.qualified("allowed_origins"))' entry '\(entry.value)' must be an origin like https://app.example.com")
                }
                allowedOrigins.append(entry.value)
            }
            try map.finish()
        }

        private static func isOrigin(_ text: String) -> Bool {
            guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
                scheme == "http" || scheme == "https", components.encodedHost?.isEmpty == false  // no IDNA (ICU) for ASCII
            else { return false }
            return components.path.isEmpty && components.query == nil && components.fragment == nil
                && components.user == nil && components.password == nil
        }
    }
}
