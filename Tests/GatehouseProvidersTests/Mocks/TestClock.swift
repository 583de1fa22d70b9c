import Foundation
import GatehouseCore
import Synchronization

/// A clock the test moves by hand; ``source`` goes into a ``ProviderContext``.
final class TestClock: Sendable {
    private let date: Mutex<Date>

    init(_ start: Date) {
        date = Mutex(start)
    }

    /// The current instant.
    var now: Date { date.withLock { $0 } }

    /// Moves the clock forward (or back, with a negative interval).
    func advance(_ seconds: TimeInterval) {
        date.withLock { $0.addTimeInterval(seconds) }
    }

    /// A ``TimeSource`` reading this clock.
    var source: TimeSource { TimeSource { self.now } }
}
