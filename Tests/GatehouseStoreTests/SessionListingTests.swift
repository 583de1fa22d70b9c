import Foundation
import GatehouseCore
import GatehouseStore
import Testing

/// ``SessionListing`` (`gatehouse sessions`), on every store: filters, newest first, limit.
@Suite struct SessionListingTests {
    @Test(arguments: StoreFactory.allCases)
    func listsByProviderAndSubjectNewestFirst(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let listing = try #require(store as? any SessionListing)
            func record(_ id: String, provider: String, subject: String, age: TimeInterval) -> SessionRecord {
                var r = Fixtures.session(id: id)
                r.provider = provider
                r.subject = subject
                r.createdAt = Fixtures.t0.addingTimeInterval(-age)
                return r
            }
            try await store.insertSession(record("a1", provider: "github", subject: "alice", age: 30))
            try await store.insertSession(record("a2", provider: "github", subject: "alice", age: 10))
            try await store.insertSession(record("a3", provider: "oidc", subject: "alice", age: 20))
            try await store.insertSession(record("b1", provider: "github", subject: "bob", age: 5))

            #expect(try await listing.sessions(provider: nil, subject: nil, limit: 10).map(\.id) == ["b1", "a2", "a3", "a1"])
            #expect(try await listing.sessions(provider: nil, subject: "alice", limit: 10).map(\.id) == ["a2", "a3", "a1"])
            #expect(try await listing.sessions(provider: "github", subject: "alice", limit: 10).map(\.id) == ["a2", "a1"])
            #expect(try await listing.sessions(provider: "oidc", subject: nil, limit: 10).map(\.id) == ["a3"])
            #expect(try await listing.sessions(provider: nil, subject: nil, limit: 2).map(\.id) == ["b1", "a2"])
            #expect(try await listing.sessions(provider: "none", subject: nil, limit: 10).isEmpty)
            #expect(try await listing.sessionCount() == 4)
        }
    }
}
