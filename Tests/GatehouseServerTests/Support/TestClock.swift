import Foundation
import GatehouseCore
import Synchronization

/// A gateway clock that tests move forward instead of sleeping.
final class TestClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)

    var source: TimeSource {
        TimeSource { Date().addingTimeInterval(self.offset.withLock { $0 }) }
    }

    func advance(by seconds: TimeInterval) {
        offset.withLock { $0 += seconds }
    }
}
