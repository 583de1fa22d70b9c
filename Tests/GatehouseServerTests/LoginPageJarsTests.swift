import Foundation
import GatehouseCore
@testable import GatehouseServer
import Testing

@Suite("Page logins in flight")
struct LoginPageJarsTests {
    private func entry(_ client: String, expiresAt: Date) -> LoginPageJars.Entry {
        let transaction = LoginTransaction(
            provider: "legacy", state: RandomToken.make(), codeVerifier: PKCE.makeVerifier(), nonce: "n", callbackURL: "", createdAt: Date())
        return LoginPageJars.Entry(transaction: transaction, client: client, expiresAt: expiresAt)
    }

    @Test("a client at its limit is refused while others start; expired and finished logins give their slots back")
    func limits() async throws {
        let jars = LoginPageJars(capacity: 5, perClient: 2)
        let now = Date()
        let soon = now.addingTimeInterval(60)
        try await jars.insert(entry("10.0.0.1", expiresAt: soon), id: "a1", now: now)
        try await jars.insert(entry("10.0.0.1", expiresAt: now.addingTimeInterval(5)), id: "a2", now: now)
        await #expect(throws: LoginPageJars.Refusal.clientBusy) { try await jars.insert(entry("10.0.0.1", expiresAt: soon), id: "a3", now: now) }
        try await jars.insert(entry("10.0.0.2", expiresAt: soon), id: "b1", now: now)
        // a2 expires: the first client may start again.
        try await jars.insert(entry("10.0.0.1", expiresAt: soon), id: "a3", now: now.addingTimeInterval(10))
        // a1 finishes (taken): another slot.
        #expect(await jars.take("a1", now: now.addingTimeInterval(10)) != nil)
        try await jars.insert(entry("10.0.0.1", expiresAt: soon), id: "a4", now: now.addingTimeInterval(10))
        // The instance's own bound still holds, whoever asks.
        try await jars.insert(entry("10.0.0.3", expiresAt: soon), id: "c1", now: now.addingTimeInterval(10))
        try await jars.insert(entry("10.0.0.4", expiresAt: soon), id: "d1", now: now.addingTimeInterval(10))
        await #expect(throws: LoginPageJars.Refusal.full) { try await jars.insert(entry("10.0.0.5", expiresAt: soon), id: "e1", now: now.addingTimeInterval(10)) }
    }
}
