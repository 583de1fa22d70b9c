import Synchronization

/// The upstreams in force (`backend` and `upstreams:`): read once per `/v1/api` request by both front ends and
/// by `/v1/authz`, replaced as a whole on SIGHUP, so a request is decided and carried out with one table,
/// the old or the new, never a mix.
final class CurrentUpstreams: Sendable {
    private let table: Mutex<UpstreamTable>

    init(_ table: UpstreamTable) {
        self.table = Mutex(table)
    }

    /// The table now.
    var current: UpstreamTable { table.withLock { $0 } }

    /// Puts a new table in force. Requests already decided finish with the routes they were decided with.
    func replace(with table: UpstreamTable) {
        self.table.withLock { $0 = table }
    }
}
