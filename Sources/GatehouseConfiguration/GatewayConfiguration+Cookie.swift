import GatehouseCore

extension GatewayConfiguration {
    /// `sessions.cookie:` — the browser session cookie.
    public struct Cookie: Sendable, Equatable {
        /// `SameSite` attribute values.
        public enum SameSite: String, Sendable, CaseIterable {
            case strict = "Strict"
            case lax = "Lax"
            case none = "None"
        }

        /// Cookie name; a `__Host-` or `__Secure-` prefix requires ``secure``.
        public var name: String
        public var secure: Bool
        public var sameSite: SameSite

        /// - Parameters:
        ///   - name: `__Host-gatehouse_session` by default.
        ///   - secure: true by default.
        ///   - sameSite: `Lax` by default.
        public init(name: String = "__Host-gatehouse_session", secure: Bool = true, sameSite: SameSite = .lax) {
            self.name = name
            self.secure = secure
            self.sameSite = sameSite
        }

        init(_ map: ConfigMap) throws {
            self.init()
            if let name = try map.string("name") {
                guard !name.isEmpty, name.unicodeScalars.allSatisfy(Self.isTokenCharacter) else {
                    throw map.error("name", "'\(map.qualified("name"))' must be a cookie name (letters, digits and !#$%&'*+-.^_`|~), not '\(name)'")
                }
                self.name = name
            }
            secure = try map.bool("secure") ?? secure
            if let text = try map.choice("same_site", SameSite.allCases.map(\.rawValue)), let value = SameSite(rawValue: text) {
                sameSite = value
            }
            if !secure {
                if name.hasPrefix("__Host-") || name.hasPrefix("__Secure-") {
                    let prefix = name.hasPrefix("__Host-") ? "__Host-" : "__Secure-"
                    throw map.error("secure", "'\(map.qualified("secure"))' must be true for a '\(prefix)' cookie")
                }
                if sameSite == .none {
                    throw map.error("same_site", "'\(map.qualified("same_site"))' None requires secure: true")
                }
            }
            try map.finish()
        }

        /// RFC 6265 `cookie-name` token characters.
        private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
            guard scalar.isASCII, scalar.value > 32, scalar.value < 127 else { return false }
            return !"()<>@,;:\\\"/[]?={}".unicodeScalars.contains(scalar)
        }
    }
}
