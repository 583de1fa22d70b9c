import Testing

@testable import GatehouseServer

@Suite("Request ids")
struct RequestIdentifierTests {
    @Test("a new id is 32 lowercase hex digits: the process's prefix, then a counter that goes up")
    func newIDs() throws {
        let first = RequestIdentifier.make()
        let second = RequestIdentifier.make()
        for id in [first, second] {
            #expect(id.utf8.count == 32)
            #expect(
                id.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
        }
        #expect(first.prefix(16) == second.prefix(16))
        let counted = try #require(UInt64(first.suffix(16), radix: 16))
        // Up, not necessarily by one: the tests running beside this one draw ids from the same counter.
        let next = try #require(UInt64(second.suffix(16), radix: 16))
        #expect(next > counted)
    }

    @Test("a trusted proxy's plain token is kept; a client's, or one with other bytes, is replaced")
    func incomingIDs() {
        #expect(RequestIdentifier.of(incoming: "abc-123_x.y:z", fromTrustedProxy: true) == "abc-123_x.y:z")
        #expect(RequestIdentifier.of(incoming: "abc-123", fromTrustedProxy: false) != "abc-123")
        #expect(RequestIdentifier.of(incoming: "a b", fromTrustedProxy: true).utf8.count == 32)
        #expect(RequestIdentifier.of(incoming: String(repeating: "a", count: 129), fromTrustedProxy: true).utf8.count == 32)
    }
}
