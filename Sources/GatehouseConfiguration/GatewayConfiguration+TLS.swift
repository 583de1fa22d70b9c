public import Foundation
import GatehouseCore

extension GatewayConfiguration {
    /// `tls:` — the gateway's own listener speaks HTTPS (and HTTP/2 by ALPN) with this certificate and key.
    public struct TLS: Sendable, Equatable {
        /// `min_version`: the oldest TLS version accepted; 1.0 and 1.1 never are.
        public enum MinimumVersion: String, Sendable, CaseIterable {
            case tls12 = "1.2"
            case tls13 = "1.3"
        }

        /// `certificate_file`: PEM chain, leaf first (absolute once loaded).
        public var certificateFile: String
        /// `private_key_file`: PEM private key (absolute once loaded).
        public var privateKeyFile: String
        public var minimumVersion: MinimumVersion
        /// `http2`: ALPN offers `h2` before `http/1.1`.
        public var http2: Bool
        /// `hsts_seconds`: when above 0, `Strict-Transport-Security: max-age=…` on every answer.
        public var hstsSeconds: Int
        /// Where `certificate_file` is written (`file:line`, or the variable that set it), for warnings.
        public var certificateLocation: String
        /// The leaf's `notAfter`, as read when the configuration was loaded.
        public var certificateExpiry: Date

        /// How long before the leaf's expiry `gatehouse check` (and start-up) warn.
        public static let expiryWarningInterval: TimeInterval = 14 * 24 * 3600

        /// - Parameters:
        ///   - certificateFile: PEM chain, leaf first.
        ///   - privateKeyFile: PEM private key.
        ///   - minimumVersion: 1.2 by default.
        ///   - http2: true by default.
        ///   - hstsSeconds: 0 (no header) by default.
        ///   - certificateLocation: where the certificate file was named.
        ///   - certificateExpiry: the leaf's `notAfter`.
        public init(
            certificateFile: String, privateKeyFile: String, minimumVersion: MinimumVersion = .tls12, http2: Bool = true,
            hstsSeconds: Int = 0, certificateLocation: String = "", certificateExpiry: Date = .distantFuture
        ) {
            self.certificateFile = certificateFile
            self.privateKeyFile = privateKeyFile
            self.minimumVersion = minimumVersion
            self.http2 = http2
            self.hstsSeconds = hstsSeconds
            self.certificateLocation = certificateLocation
            self.certificateExpiry = certificateExpiry
        }

        /// The warning for a leaf that expires within ``expiryWarningInterval`` of `now`, as `file:line: …`.
        public func expiryWarning(now: Date = Date()) -> String? {
            guard certificateExpiry.timeIntervalSince(now) < Self.expiryWarningInterval else { return nil }
            let days = Int(certificateExpiry.timeIntervalSince(now) / 86400)
            return "\(certificateLocation): the certificate expires on \(TLSCertificatePair.format(certificateExpiry)) "
                + "(in \(days) day\(days == 1 ? "" : "s")): renew it and send SIGHUP"
        }

        /// Reads `tls:`; the pair is read and checked at once (unreadable, not matching, expired). A block with
        /// no value at all (every key empty, as the environment may leave it) is no TLS: nil.
        static func read(_ map: ConfigMap) throws -> TLS? {
            let keys = ["certificate_file", "private_key_file", "min_version", "http2", "hsts_seconds"]
            guard keys.contains(where: { map.node($0) != nil }) else {
                try map.finish()
                return nil
            }
            return try TLS(map)
        }

        private init(_ map: ConfigMap) throws {
            let certificate = try map.requiredString("certificate_file")
            let key = try map.requiredString("private_key_file")
            self.init(certificateFile: map.resolve(certificate), privateKeyFile: map.resolve(key))
            let located = map.error("certificate_file", "")
            certificateLocation = located.line > 0 ? "\(located.file):\(located.line)" : located.file
            if let text = try map.choice("min_version", MinimumVersion.allCases.map(\.rawValue)), let value = MinimumVersion(rawValue: text) {
                minimumVersion = value
            }
            http2 = try map.bool("http2") ?? http2
            hstsSeconds = try map.nonNegativeInt("hsts_seconds", unit: "seconds") ?? hstsSeconds
            try map.finish()
            guard !certificate.isEmpty, !key.isEmpty, !map.hasProblem("certificate_file"), !map.hasProblem("private_key_file") else { return }
            do {
                certificateExpiry = try TLSCertificatePair.load(certificateFile: certificateFile, privateKeyFile: privateKeyFile).notValidAfter
            } catch {
                let key = error.isAboutKey ? "private_key_file" : "certificate_file"
                try map.report(key, "'\(map.qualified(key))': \(error)")
            }
        }
    }

    /// Reads `tls:` and `redirect_http_listen`, and checks `public_url` against them.
    static func readTLS(_ map: ConfigMap, into configuration: inout GatewayConfiguration) throws {
        if let section = try map.map("tls") { configuration.tls = try TLS.read(section) }
        if let text = try map.string("redirect_http_listen") {
            guard let address = ListenAddress(text) else {
                throw map.error("redirect_http_listen", "'redirect_http_listen' must be host:port (e.g. 0.0.0.0:80), not '\(text)'")
            }
            guard configuration.tls != nil || map.hasProblem("tls") else {
                throw map.error("redirect_http_listen", "'redirect_http_listen' needs 'tls': it redirects plain HTTP to the HTTPS listener")
            }
            configuration.redirectHTTPListen = address
        }
    }

    /// With `tls`, an explicit `public_url` must be `https`.
    static func checkPublicURL(_ map: ConfigMap, _ configuration: GatewayConfiguration) throws {
        guard configuration.tls != nil, configuration.publicURLIsExplicit, !configuration.publicURL.lowercased().hasPrefix("https://") else { return }
        try map.report("public_url", "'public_url' must be https when 'tls' is set, not '\(configuration.publicURL)'", after: ["tls"])
    }
}
