import Foundation
import Synchronization

/// Wrong user codes per browser (its `gatehouse_device` cookie) per minute, counted on this instance: at most
/// ``limit`` in any 60 seconds, then every code from that browser is refused until the oldest wrong try is a
/// minute old. Per instance, not in the store: a wrong code costs no store write, and behind a load balancer
/// that spreads one browser over N instances the bound is N × limit, still far from guessing a code
/// (20^8 possibilities).
final class DeviceAttemptLimiter: Sendable {
    let limit: Int
    let window: TimeInterval
    private let failures = Mutex<[String: [Date]]>([:])

    init(limit: Int = 5, window: TimeInterval = 60) {
        self.limit = limit
        self.window = window
    }

    /// Whether `browser` may try a code at `now`.
    func allows(_ browser: String, now: Date) -> Bool {
        failures.withLock { table in
            let recent = (table[browser] ?? []).filter { now.timeIntervalSince($0) < window }
            table[browser] = recent.isEmpty ? nil : recent
            return recent.count < limit
        }
    }

    /// Counts a wrong code of `browser`.
    func failed(_ browser: String, now: Date) {
        failures.withLock { table in
            // Forget browsers whose tries are all old, so the table stays as small as the last minute's traffic.
            if table.count > 10_000 { table = table.filter { $0.value.contains { now.timeIntervalSince($0) < window } } }
            table[browser, default: []].append(now)
        }
    }
}
