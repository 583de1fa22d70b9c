import Foundation

/// The proofs one process has accepted (`replay: instance`), by ``DPoPReplayKey`` (key thumbprint and `jti`), each kept at least
/// ``window`` after it was recorded — as long as its `iat` can pass the age check — and then dropped.
///
/// Two generations: records go into the current one; once more than a window has passed since the last turn,
/// the current becomes the previous and the previous is dropped. A record is therefore kept between one and two
/// windows, the set holds at most two windows' worth of proofs, and pruning costs nothing per request.
struct DPoPReplaySet: Sendable {
    /// How long a record must be kept: ``DPoPPolicy/maxAgeSeconds`` plus twice the clock skew.
    let window: TimeInterval
    private var current: Set<DPoPReplayKey> = []
    private var previous: Set<DPoPReplayKey> = []
    private var turned: Date

    init(window: TimeInterval, now: Date) {
        self.window = window
        turned = now
    }

    /// Records `key`; `false` when it was recorded before (a replay).
    mutating func record(_ key: DPoPReplayKey, now: Date) -> Bool {
        // Turned only once more than a window has passed (a record made at the last instant of a window is kept
        // until more than a window after it); a clock that went back turns nothing, so records only last longer.
        let since = now.timeIntervalSince(turned)
        if since > 2 * window {
            // Idle for two windows: every record is older than one.
            current.removeAll()
            previous.removeAll()
            turned = now
        } else if since > window {
            swap(&current, &previous)
            current.removeAll(keepingCapacity: true)
            turned = now
        }
        if previous.contains(key) { return false }
        return current.insert(key).inserted
    }

    /// How many records are kept.
    var count: Int { current.count + previous.count }
}
