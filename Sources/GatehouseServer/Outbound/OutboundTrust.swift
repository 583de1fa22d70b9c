import Foundation
import GatehouseConfiguration
import NIOSSL
import Synchronization

/// The ``OutboundTLS`` in force and the TLS configurations made from it: the shared client's own (made at
/// start-up), each provider's with its `tls.ca_file`. A SIGHUP reload puts a new one in force (the files read
/// again); requests then carry their configuration, since the client's own is the start-up one.
final class OutboundTrust: Sendable {
    private struct State {
        var outbound: OutboundTLS
        /// 0 until the first reload: while it is 0 the client's own configuration is the one in force.
        var generation: Int
        var base: TLSConfiguration
        /// A provider's configuration by its `ca_file`, made at its first use after a reload.
        var providers: [String: TLSConfiguration]
    }

    private let state: Mutex<State>
    /// What the shared client was made with (`HTTPClient.Configuration.tlsConfiguration`).
    let clientConfiguration: TLSConfiguration

    init(_ outbound: OutboundTLS) throws {
        let base = try outbound.configuration()
        clientConfiguration = base
        state = Mutex(State(outbound: outbound, generation: 0, base: base, providers: [:]))
    }

    /// The trust in force.
    var outbound: OutboundTLS { state.withLock { $0.outbound } }

    /// The configuration a request to a provider (or an upstream without its own `tls`) carries; nil: the
    /// client's own.
    /// - Parameter caFile: the provider's `tls.ca_file`.
    func configuration(caFile: String?) throws -> TLSConfiguration? {
        guard let caFile else { return state.withLock { $0.generation == 0 ? nil : $0.base } }
        if let known = state.withLock({ $0.providers[caFile] }) { return known }
        let made = try state.withLock { $0.outbound }.configuration(caFile: caFile)
        state.withLock { $0.providers[caFile] = made }
        return made
    }

    /// Reads a provider's `ca_file` again (the provider files are being loaded): the next requests use it.
    func reload(caFile: String) throws {
        let made = try state.withLock { $0.outbound }.configuration(caFile: caFile)
        state.withLock { $0.providers[caFile] = made }
    }

    /// Puts `outbound` in force (SIGHUP); returns the previous trust, to put back if the reload is refused.
    @discardableResult
    func replace(with outbound: OutboundTLS) throws -> OutboundTLS {
        let base = try outbound.configuration()
        return state.withLock { state in
            let previous = state.outbound
            state = State(outbound: outbound, generation: state.generation + 1, base: base, providers: [:])
            return previous
        }
    }
}
