import Foundation
import Testing

@testable import GatehouseStore

/// What a process remembers of the once log, without a database: expiry, the later of two expiries, and
/// forgetting a second at a time only what expired before the last sweep.
@Suite struct SQLiteOnceMemoryTests {
    private let a = SQLiteOnceDigest(key: "dpop k a")
    private let b = SQLiteOnceDigest(key: "dpop k b")
    private let c = SQLiteOnceDigest(key: "dpop k c")

    @Test func aDigestIsSixteenBytesOfTheKeysSHA256AndRoundTrips() throws {
        // SHA-256("abc") begins ba7816bf 8f01cfea 414140de 5dae2223.
        let digest = SQLiteOnceDigest(key: "abc")
        #expect(digest.blob == Data([0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23]))
        #expect(SQLiteOnceDigest(blob: digest.blob) == digest)
        #expect(SQLiteOnceDigest(blob: Data(count: 15)) == nil)
        #expect(SQLiteOnceDigest(key: "dpop k a") != SQLiteOnceDigest(key: "dpop k b"))
    }

    @Test func aRecordIsLiveUntilItsExpiryInclusiveAndTheLaterExpiryWins() {
        var memory = SQLiteOnceMemory()
        memory.remember(a, until: 100)
        #expect(memory.isLive(a, at: 100))
        #expect(!memory.isLive(a, at: 100.5))
        #expect(!memory.isLive(b, at: 0))
        memory.remember(a, until: 50)
        #expect(memory.isLive(a, at: 80), "an earlier expiry does not shorten a known one")
        memory.remember(a, until: 200)
        #expect(memory.isLive(a, at: 150))
    }

    @Test func pruningForgetsOneWholeSecondPerCallAndOnlyBeforeTheSweep() {
        var memory = SQLiteOnceMemory()
        // Seconds out of order: pruning still goes oldest first.
        memory.remember(b, until: 20.5)
        memory.remember(a, until: 10.2)
        memory.remember(c, until: 30.9)
        memory.prune(seconds: 10)
        #expect(memory.count == 3, "nothing is forgotten before a sweep")

        memory.expire(before: 21)
        memory.prune(seconds: 1)
        #expect(memory.count == 2)
        #expect(!memory.isLive(a, at: 0), "a (second 10) goes first")
        memory.prune(seconds: 5)
        #expect(memory.count == 1, "b (second 20) ends before 21; c's second does not")
        #expect(memory.isLive(c, at: 30))

        // A record whose expiry moved later survives the pruning of its old second.
        memory.remember(a, until: 22)
        memory.remember(a, until: 40)
        memory.expire(before: 23)
        memory.prune(seconds: 5)
        #expect(memory.isLive(a, at: 39))
        #expect(memory.count == 2)
    }

    @Test func theLastIDOnlyMovesForward() {
        var memory = SQLiteOnceMemory()
        memory.learn([:], upTo: 7)
        memory.learn([:], upTo: 3)
        #expect(memory.lastID == 7)
    }
}
