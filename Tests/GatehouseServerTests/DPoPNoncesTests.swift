import Foundation
import GatehouseCore
import Testing

@testable import GatehouseServer

/// The nonce formats: shared (any instance with the sealing keys) and per instance (`replay: instance`).
struct DPoPNoncesTests {
    static let keys: [CredentialSealer.Key] = [.init(id: "k1", bytes: Data(repeating: 7, count: 32))]
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func instance(_ byte: UInt8 = 1) -> DPoPNonces {
        DPoPNonces(sealingKeys: keys, lifetime: 300, instance: Data(repeating: byte, count: DPoPNonces.instanceIDBytes))
    }

    @Test func anInstanceAcceptsItsOwnNonceWithinItsLifetime() {
        let nonces = Self.instance()
        let nonce = nonces.issue(now: Self.now)
        #expect(nonces.accepts(nonce, now: Self.now))
        #expect(nonces.accepts(nonce, now: Self.now.addingTimeInterval(300)))
        #expect(!nonces.accepts(nonce, now: Self.now.addingTimeInterval(301)), "expired")
        #expect(!nonces.accepts(nonce, now: Self.now.addingTimeInterval(-6)), "issued in the future")
    }

    @Test func aRememberedNonceIsStillJudgedByItsAgeAndOnlyItsExactTextIsRemembered() throws {
        let nonces = Self.instance()
        let nonce = nonces.issue(now: Self.now)
        for _ in 0..<3 { #expect(nonces.accepts(nonce, now: Self.now)) }
        // Remembered as accepted, yet past its lifetime (or before its issue): refused.
        #expect(!nonces.accepts(nonce, now: Self.now.addingTimeInterval(301)))
        #expect(!nonces.accepts(nonce, now: Self.now.addingTimeInterval(-6)))
        #expect(nonces.accepts(nonce, now: Self.now.addingTimeInterval(1)))
        // A refused text is never remembered as accepted, and a one-byte change of the accepted one is refused.
        var forged = try #require(Base64URL.decode(nonce))
        forged[forged.count - 1] ^= 1
        for _ in 0..<2 { #expect(!nonces.accepts(Base64URL.encode(forged), now: Self.now)) }
        #expect(!Self.instance(2).accepts(nonce, now: Self.now), "another instance's memory is its own")
    }

    @Test func anotherInstanceOrARestartedOneRefusesIt() {
        let nonce = Self.instance(1).issue(now: Self.now)
        #expect(!Self.instance(2).accepts(nonce, now: Self.now))
        // A restart draws a new id.
        let first = DPoPNonces(sealingKeys: Self.keys, lifetime: 300, instance: DPoPNonces.newInstanceID())
        let second = DPoPNonces(sealingKeys: Self.keys, lifetime: 300, instance: DPoPNonces.newInstanceID())
        #expect(!second.accepts(first.issue(now: Self.now), now: Self.now))
        #expect(first.accepts(first.issue(now: Self.now), now: Self.now))
    }

    @Test func forgedTruncatedOrOfTheOtherFormatIsRefused() throws {
        let nonces = Self.instance()
        let nonce = nonces.issue(now: Self.now)
        var bytes = try #require(Base64URL.decode(nonce))
        #expect(bytes.count == DPoPNonces.instanceIDBytes + 8 + 16)
        for index in [0, DPoPNonces.instanceIDBytes, bytes.count - 1] {
            var forged = bytes
            forged[index] ^= 1
            #expect(!nonces.accepts(Base64URL.encode(forged), now: Self.now), "byte \(index) changed")
        }
        // Another instance's id written over this one's, the MAC left as it was.
        let other = try #require(Base64URL.decode(Self.instance(2).issue(now: Self.now)))
        bytes.replaceSubrange(0..<DPoPNonces.instanceIDBytes, with: other.prefix(DPoPNonces.instanceIDBytes))
        #expect(!Self.instance(2).accepts(Base64URL.encode(bytes), now: Self.now))
        #expect(!nonces.accepts(String(nonce.dropLast(2)), now: Self.now))
        #expect(!nonces.accepts("", now: Self.now))
        #expect(!nonces.accepts("!!!!", now: Self.now))
        #expect(!nonces.accepts(String(repeating: "A", count: 4096), now: Self.now))
        // The shared format (no instance) is not accepted per instance, nor the other way round.
        let shared = DPoPNonces(sealingKeys: Self.keys, lifetime: 300)
        #expect(shared.accepts(shared.issue(now: Self.now), now: Self.now))
        #expect(!nonces.accepts(shared.issue(now: Self.now), now: Self.now))
        #expect(!shared.accepts(nonce, now: Self.now))
        // Other sealing keys: not this gateway's.
        let stranger = DPoPNonces(
            sealingKeys: [.init(id: "x", bytes: Data(repeating: 9, count: 32))], lifetime: 300,
            instance: Data(repeating: 1, count: DPoPNonces.instanceIDBytes))
        #expect(!nonces.accepts(stranger.issue(now: Self.now), now: Self.now))
    }

    @Test func aRotatedOutSealingKeyStillVerifies() {
        let old = Self.instance()
        let rotated = DPoPNonces(
            sealingKeys: [.init(id: "k2", bytes: Data(repeating: 8, count: 32))] + Self.keys, lifetime: 300,
            instance: Data(repeating: 1, count: DPoPNonces.instanceIDBytes))
        #expect(rotated.accepts(old.issue(now: Self.now), now: Self.now))
    }
}
