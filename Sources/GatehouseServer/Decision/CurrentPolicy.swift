import Synchronization

/// The ``PolicySnapshot`` in force: read once per request, replaced as a whole on SIGHUP (``ProviderReloader``).
/// Requests already decided finish with the snapshot they were decided with.
final class CurrentPolicy: Sendable {
    private let snapshot: Mutex<PolicySnapshot>

    init(_ snapshot: PolicySnapshot) {
        self.snapshot = Mutex(snapshot)
    }

    /// The snapshot now.
    var current: PolicySnapshot { snapshot.withLock { $0 } }

    /// Puts a new snapshot in force.
    func replace(with snapshot: PolicySnapshot) {
        self.snapshot.withLock { $0 = snapshot }
    }
}
