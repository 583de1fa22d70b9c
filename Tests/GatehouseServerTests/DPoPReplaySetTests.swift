import Foundation
import Testing

@testable import GatehouseServer

/// `replay: instance`'s record: each proof accepted once while it can pass the age check, then pruned.
struct DPoPReplaySetTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let thumbprint = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"

    static func key(_ jti: String) -> DPoPReplayKey { DPoPReplayKey(thumbprint: thumbprint, jti: jti) }

    @Test func aRecordIsRefusedTheSecondTimeForAtLeastOneWindow() {
        var set = DPoPReplaySet(window: 70, now: Self.start)
        func record(_ key: String, _ seconds: Double) -> Bool { set.record(Self.key(key), now: Self.start.addingTimeInterval(seconds)) }
        #expect(record("a", 0))
        #expect(!record("a", 0))
        #expect(record("b", 69))
        // Every instant up to a window after each record.
        for second in stride(from: 0.0, through: 70, by: 0.5) {
            #expect(!record("a", second), "a at \(second) s")
        }
        for second in stride(from: 69.0, through: 139, by: 0.5) {
            #expect(!record("b", second), "b at \(second) s")
        }
    }

    @Test func oldRecordsArePrunedAndTheSetStaysBounded() {
        var set = DPoPReplaySet(window: 10, now: Self.start)
        func record(_ key: String, _ seconds: Double) -> Bool { set.record(Self.key(key), now: Self.start.addingTimeInterval(seconds)) }
        var peak = 0
        // 100 records a second for 100 s: at most two windows' worth are kept.
        for tick in 0..<10_000 {
            #expect(record("jti-\(tick)", Double(tick) / 100))
            peak = max(peak, set.count)
        }
        #expect(peak <= 2 * (10 * 100 + 1))
        // Idle for two windows: everything is gone, and an old record may be made again (its proof is too old
        // by now to pass the age check).
        #expect(record("late", 120))
        #expect(set.count == 1)
        #expect(record("jti-9999", 120))
    }

    @Test func aClockThatGoesBackKeepsTheRecords() {
        var set = DPoPReplaySet(window: 10, now: Self.start)
        func record(_ key: String, _ seconds: Double) -> Bool { set.record(Self.key(key), now: Self.start.addingTimeInterval(seconds)) }
        #expect(record("a", 0))
        #expect(!record("a", -100))
        #expect(!record("a", -95))
    }

    @Test func theSharedRecordIsTheSame() {
        let replay = DPoPInstanceReplay(window: 10, now: Self.start)
        #expect(replay.record(Self.key("a"), now: Self.start))
        #expect(!replay.record(Self.key("a"), now: Self.start.addingTimeInterval(1)))
        #expect(replay.count == 1)
    }

    @Test func aKeyIsItsThumbprintAndJtiAndNothingElse() {
        #expect(DPoPReplayKey(thumbprint: "k", jti: "a") == DPoPReplayKey(thumbprint: "k", jti: "a"))
        #expect(DPoPReplayKey(thumbprint: "k", jti: "a") != DPoPReplayKey(thumbprint: "k", jti: "b"))
        #expect(DPoPReplayKey(thumbprint: "k", jti: "a") != DPoPReplayKey(thumbprint: "l", jti: "a"))
        // Where one ends and the other starts is part of the key.
        #expect(DPoPReplayKey(thumbprint: "ab", jti: "c") != DPoPReplayKey(thumbprint: "a", jti: "bc"))
        #expect(DPoPReplayKey(thumbprint: "a b", jti: "c") != DPoPReplayKey(thumbprint: "a", jti: "b c"))
        #expect(DPoPReplayKey(thumbprint: "", jti: "kab") != DPoPReplayKey(thumbprint: "k", jti: "ab"))
        // The same jti under another key is another proof; a long jti is as good a key as a short one.
        var set = DPoPReplaySet(window: 10, now: Self.start)
        func record(_ thumbprint: String, _ jti: String) -> Bool { set.record(DPoPReplayKey(thumbprint: thumbprint, jti: jti), now: Self.start) }
        let long = String(repeating: "x", count: 256)
        #expect(record("k", long))
        #expect(record("l", long))
        #expect(!record("k", long))
        #expect(record("k", long + "y"))
        // The bytes are the key: two spellings of one text that Swift's `==` takes as equal (é precomposed and
        // decomposed) are two jtis, as they are to every other implementation of the check.
        #expect(DPoPReplayKey(thumbprint: "k", jti: "caf\u{E9}") != DPoPReplayKey(thumbprint: "k", jti: "cafe\u{301}"))
    }
}
