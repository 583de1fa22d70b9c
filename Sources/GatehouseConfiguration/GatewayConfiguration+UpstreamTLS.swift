import GatehouseCore

extension GatewayConfiguration {
    /// `tls:` of `backend` or of an entry of `upstreams:` — how an `https` upstream is trusted and what the gateway
    /// presents to it; in addition to `outbound_tls`.
    public struct UpstreamTLS: Sendable, Equatable {
        /// `ca_file`: a PEM bundle trusted for this upstream only (absolute once loaded).
        public var caFile: String?
        /// `client_certificate_file`: PEM chain, leaf first, presented to the upstream (mutual TLS).
        public var clientCertificateFile: String?
        /// `client_key_file`: the private key of ``clientCertificateFile``.
        public var clientKeyFile: String?
        /// `server_name`: the name sent as SNI and checked in the upstream's certificate, instead of the URL's host.
        public var serverName: String?

        public init(caFile: String? = nil, clientCertificateFile: String? = nil, clientKeyFile: String? = nil, serverName: String? = nil) {
            self.caFile = caFile
            self.clientCertificateFile = clientCertificateFile
            self.clientKeyFile = clientKeyFile
            self.serverName = serverName
        }

        /// Whether anything is set.
        public var isEmpty: Bool { caFile == nil && clientCertificateFile == nil && clientKeyFile == nil && serverName == nil }

        /// Reads `tls:`; every file named is read and checked at its line. A block that sets nothing is nil.
        static func read(_ map: ConfigMap) throws -> UpstreamTLS? {
            var tls = UpstreamTLS()
            if let file = try map.nonEmptyString("ca_file") {
                tls.caFile = map.resolve(file)
                do {
                    _ = try CertificateBundle.load(file: map.resolve(file))
                } catch {
                    try map.report("ca_file", "'\(map.qualified("ca_file"))': \(error)")
                }
            }
            tls.clientCertificateFile = try map.nonEmptyString("client_certificate_file").map(map.resolve)
            tls.clientKeyFile = try map.nonEmptyString("client_key_file").map(map.resolve)
            if let name = try map.nonEmptyString("server_name") {
                if name.contains(where: { "/:@ ".contains($0) }) {
                    try map.report("server_name", "'\(map.qualified("server_name"))' is a host name (like app.internal), not '\(name)'")
                }
                tls.serverName = name
            }
            try map.finish()
            try checkClientPair(map, tls)
            return tls.isEmpty ? nil : tls
        }

        /// A client certificate needs its key and the other way round; the two must match and the leaf must be valid.
        private static func checkClientPair(_ map: ConfigMap, _ tls: UpstreamTLS) throws {
            switch (tls.clientCertificateFile, tls.clientKeyFile) {
            case (nil, nil):
                return
            case (.some, nil):
                try map.report(
                    "client_certificate_file",
                    "'\(map.qualified("client_certificate_file"))' needs '\(map.qualified("client_key_file"))': the private key of the certificate")
            case (nil, .some):
                try map.report(
                    "client_key_file",
                    "'\(map.qualified("client_key_file"))' needs '\(map.qualified("client_certificate_file"))': the certificate of the key")
            case (.some(let certificate), .some(let key)):
                guard !map.hasProblem("client_certificate_file"), !map.hasProblem("client_key_file") else { return }
                do {
                    _ = try TLSCertificatePair.load(certificateFile: certificate, privateKeyFile: key)
                } catch {
                    let key = error.isAboutKey ? "client_key_file" : "client_certificate_file"
                    try map.report(key, "'\(map.qualified(key))': \(error)")
                }
            }
        }
    }
}
