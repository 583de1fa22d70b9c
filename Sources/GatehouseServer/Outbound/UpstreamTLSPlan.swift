import Foundation
import GatehouseConfiguration
import NIOSSL

/// How an `https` upstream with its own `tls:` is reached: the TLS configuration (its `ca_file` added to the
/// trust, its client certificate), made when the upstream table is (start-up, SIGHUP), and, with `server_name`,
/// the origin the request is addressed to and where that name is connected.
struct UpstreamTLSPlan: Sendable {
    /// The configuration, or why it could not be made (the files changed after they were checked): such an
    /// upstream answers 502 until the next reload.
    let configuration: Result<TLSConfiguration, OutboundTLSError>
    /// With `server_name`: the upstream's origin and the same with the name instead of the host
    /// (`https://app.internal:8443`), and the host the name is connected to.
    let named: (origin: String, namedOrigin: String, name: String, host: String)?

    /// The plan of an upstream URL and its `tls:`; nil for a plain `http` URL.
    init?(url: String, tls: GatewayConfiguration.UpstreamTLS, outbound: OutboundTLS) {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https", let host = components.host else {
            return nil
        }
        do {
            configuration = .success(
                try outbound.configuration(caFile: tls.caFile, clientCertificateFile: tls.clientCertificateFile, clientKeyFile: tls.clientKeyFile))
        } catch let error as OutboundTLSError {
            configuration = .failure(error)
        } catch {
            configuration = .failure(OutboundTLSError("\(error)"))
        }
        if let name = tls.serverName {
            let port = components.port.map { ":\($0)" } ?? ""
            let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
            named = (origin: UpstreamPath.split(url).origin, namedOrigin: "https://\(name)\(port)", name: name, host: bare)
        } else {
            named = nil
        }
    }
}
