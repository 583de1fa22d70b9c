import Foundation
import GatehouseCore
import GatehouseStore
import Testing

extension SessionStoreBehaviourTests {
    // MARK: Sessions by the provider's session (back-channel logout)

    @Test(arguments: StoreFactory.allCases)
    func sessionsAreFoundByTheProvidersSessionOrBySubjectAtOneProvider(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            func session(_ id: String, provider: String = "github", subject: String = "alice", sid: String?) -> SessionRecord {
                var record = Fixtures.session(id: id)
                record.provider = provider
                record.subject = subject
                record.providerSessionID = sid
                return record
            }
            for record in [
                session("a1", sid: "sid-1"), session("a2", sid: "sid-1"), session("a3", sid: "sid-2"), session("a4", sid: nil),
                session("b1", subject: "bob", sid: "sid-1"), session("o1", provider: "other", sid: "sid-1"),
            ] {
                try await store.insertSession(record)
            }
            #expect(try await store.session(id: "a1")?.providerSessionID == "sid-1")
            #expect(try await store.session(id: "a4")?.providerSessionID == nil)
            let bySID = try await store.sessionIDs(provider: "github", matching: .providerSession(sid: "sid-1", subject: nil))
            #expect(Set(bySID) == ["a1", "a2", "b1"])
            let bySIDAndSubject = try await store.sessionIDs(provider: "github", matching: .providerSession(sid: "sid-1", subject: "alice"))
            #expect(Set(bySIDAndSubject) == ["a1", "a2"])
            #expect(Set(try await store.sessionIDs(provider: "github", matching: .subject("alice"))) == ["a1", "a2", "a3", "a4"])
            #expect(try await store.sessionIDs(provider: "github", matching: .providerSession(sid: "sid-9", subject: nil)).isEmpty)
            #expect(try await store.sessionIDs(provider: "other", matching: .subject("bob")).isEmpty)
        }
    }
}
