import Foundation
public import GatehouseCore

extension CaptureProvider {
    /// Where the success page carries the token (`capture.from`).
    public enum Source: Sendable, Equatable {
        /// A cookie of this name, set through the redirect chain (`cookie_name`, default `oauth_token`).
        case cookie(name: String)
        /// The page title: `prefix` (case-insensitive) then form pairs, the token under `parameter`.
        case title(prefix: String, parameter: String)
    }

    /// The `capture` keys of a provider file.
    public struct Configuration: Sendable {
        public var loginURL: String
        public var allowedOrigins: [String]
        /// A URL pattern (`*` matches anything) of the page that carries the token (`success_url`).
        public var successURL: String
        public var source: Source
        /// The call that validates a captured token and answers the identity (`probe`).
        public var probe: ProviderAPI

        public init(loginURL: String, allowedOrigins: [String], successURL: String, source: Source, probe: ProviderAPI) {
            self.loginURL = loginURL
            self.allowedOrigins = allowedOrigins
            self.successURL = successURL
            self.source = source
            self.probe = probe
        }

        /// Reads the `capture` keys; the caller calls `finish()`. A collecting map reads them all (see ``ConfigMap``).
        public init(_ map: ConfigMap) throws {
            let loginURL = try map.requiredURL("login_url")
            let allowedOrigins = try LoginPageSettings.origins(map)
            if !(WebOrigin.of(loginURL).map { allowedOrigins.contains($0) } ?? false) {
                try map.report(
                    "allowed_origins", "'\(map.qualified("allowed_origins"))' must contain the origin of '\(loginURL)'", after: ["login_url"])
            }
            let successURL = try map.requiredString("success_url")
            if !(WebOrigin.of(successURL.replacingOccurrences(of: "*", with: "x")).map { allowedOrigins.contains($0) } ?? false) {
                try map.report(
                    "success_url", "'\(map.qualified("success_url"))' must be a URL pattern on one of the allowed origins", after: ["allowed_origins"]
                )
            }
            self.loginURL = loginURL
            self.allowedOrigins = allowedOrigins
            self.successURL = successURL
            let capture = try map.mapOrEmpty("capture")
            switch try capture.choice("from", ["cookie", "title"]) ?? "cookie" {
            case "title":
                source = .title(
                    prefix: try capture.string("title_prefix") ?? "Success ", parameter: try capture.string("title_parameter") ?? "oauth_token")
                _ = try capture.string("cookie_name")
            default:
                source = .cookie(name: try capture.string("cookie_name") ?? "oauth_token")
                _ = try capture.string("title_prefix")
                _ = try capture.string("title_parameter")
            }
            try capture.finish()
            if let probe = try ProviderAPI(map.map("probe"), defaultAuthentication: .bearer) {
                self.probe = probe
            } else {
                try map.report("probe", "'\(map.qualified("probe"))' is required (the call that validates a captured token)")
                probe = ProviderAPI(url: ConfigMap.placeholderURL)
            }
        }
    }
}
