import Foundation
import GatehouseCore
import GatehouseStore
import Synchronization
import Testing

@testable import GatehouseServer

/// Device sign-ins in a store (``DeviceAuthorizations``) and the wrong-code bound (``DeviceAttemptLimiter``),
/// with the memory store and a clock the tests move. End to end over HTTP: Tests/CLI/test_device_signin.py.
@Suite struct DeviceAuthorizationsTests {
    final class Clock: Sendable {
        let current = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
        var source: TimeSource { TimeSource { [self] in current.withLock { $0 } } }
        func advance(_ seconds: TimeInterval) { current.withLock { $0 += seconds } }
    }

    static let result = LoginResult(identity: Identity(subject: "alice"), credential: Credential(accessToken: "at", issuedAt: Date()))

    static func make() throws -> (DeviceAuthorizations, Clock, MemorySessionStore) {
        let clock = Clock()
        let store = MemorySessionStore()
        let sealer = try CredentialSealer(keys: [.init(id: "k1", bytes: Data(repeating: 7, count: 32))])
        return (DeviceAuthorizations(store: store, sealer: sealer, clock: clock.source), clock, store)
    }

    static func created(_ devices: DeviceAuthorizations, _ clock: Clock) async throws -> (deviceCode: String, userCode: String) {
        let userCode = UserCode.make()
        let deviceCode = RandomToken.make()
        let authorization = DeviceAuthorization(
            userCodeHash: UserCode.hash(UserCode.normalize(userCode)!), provider: nil, dpopThumbprint: nil, clientAddress: "192.0.2.1",
            requestedAt: clock.source.now(), lifetime: 600, interval: 5)
        try await devices.create(authorization, deviceCode: deviceCode, userCode: userCode, lifetime: 600)
        return (deviceCode, userCode)
    }

    @Test("the user code finds the sign-in; nothing is stored under either code itself")
    func lookup() async throws {
        let (devices, clock, _) = try Self.make()
        let (deviceCode, userCode) = try await Self.created(devices, clock)
        let found = try #require(try await devices.find(userCode: UserCode.normalize(userCode)!))
        #expect(found.deviceHash == RandomToken.hash(deviceCode))
        #expect(found.authorization.clientAddress == "192.0.2.1")
        #expect(try await devices.authorization(deviceHash: deviceCode) == nil)
    }

    @Test("an approved sign-in is taken once; then the device code is unknown")
    func consumedOnce() async throws {
        let (devices, clock, _) = try Self.make()
        let (deviceCode, _) = try await Self.created(devices, clock)
        let hash = RandomToken.hash(deviceCode)
        let approved = try await devices.update(deviceHash: hash) { $0.approve(Self.result, provider: "idp", at: clock.source.now()) }
        #expect(approved == true)
        let first = try await devices.consume(deviceHash: hash)
        let second = try await devices.consume(deviceHash: hash)
        #expect(first && !second)
        #expect(try await devices.authorization(deviceHash: hash) == nil)
        let late = try await devices.update(deviceHash: hash) { $0.poll(at: clock.source.now()) }
        #expect(late == nil)
    }

    @Test("past its lifetime the sign-in still answers expired_token, and its user code is gone")
    func expiry() async throws {
        let (devices, clock, _) = try Self.make()
        let (deviceCode, userCode) = try await Self.created(devices, clock)
        clock.advance(601)
        #expect(try await devices.find(userCode: UserCode.normalize(userCode)!) == nil)
        let outcome = try await devices.update(deviceHash: RandomToken.hash(deviceCode)) { $0.poll(at: clock.source.now()) }
        #expect(outcome == .expiredToken)
        clock.advance(600)
        #expect(try await devices.authorization(deviceHash: RandomToken.hash(deviceCode)) == nil)
    }

    @Test("polls are recorded: a second one within the interval is slow_down")
    func pollsRecorded() async throws {
        let (devices, clock, _) = try Self.make()
        let (deviceCode, _) = try await Self.created(devices, clock)
        let hash = RandomToken.hash(deviceCode)
        let first = try await devices.update(deviceHash: hash) { $0.poll(at: clock.source.now()) }
        clock.advance(1)
        let second = try await devices.update(deviceHash: hash) { $0.poll(at: clock.source.now()) }
        #expect(first == .authorizationPending && second == .slowDown)
        #expect(try await devices.authorization(deviceHash: hash)?.authorization.interval == 10)
    }

    @Test("five wrong codes per browser per minute, then refused until the oldest is a minute old")
    func attemptLimiter() {
        let limiter = DeviceAttemptLimiter()
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        for second in 0..<5 {
            #expect(limiter.allows("a", now: start.addingTimeInterval(TimeInterval(second))))
            limiter.failed("a", now: start.addingTimeInterval(TimeInterval(second)))
        }
        #expect(!limiter.allows("a", now: start.addingTimeInterval(30)))
        #expect(limiter.allows("b", now: start.addingTimeInterval(30)))
        #expect(limiter.allows("a", now: start.addingTimeInterval(60)))
    }
}
