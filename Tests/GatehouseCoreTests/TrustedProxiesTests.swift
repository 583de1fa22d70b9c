import GatehouseCore
import Testing

@Suite struct TrustedProxiesTests {
    @Test func addressesAndRangesOfBothFamilies() throws {
        let trusted = try TrustedProxies(["10.0.0.0/8", "192.168.1.7", "fd00::/8", "::1"])
        for address in ["10.1.2.3", "10.255.255.255", "192.168.1.7", "fd12::1", "::1", "::ffff:10.9.8.7"] {
            #expect(trusted.trusts(address), "\(address)")
        }
        for address in ["11.0.0.1", "192.168.1.8", "fe80::1", "::2", "127.0.0.1", "not an address", ""] {
            #expect(!trusted.trusts(address), "\(address)")
        }
        #expect(!trusted.trusts(nil))
        #expect(!TrustedProxies.none.trusts("127.0.0.1"))
    }

    @Test func prefixesAtByteAndBitBoundaries() throws {
        let trusted = try TrustedProxies(["172.16.0.0/12", "0.0.0.0/0"])
        #expect(trusted.trusts("172.31.255.1") && trusted.trusts("8.8.8.8"))
        let narrow = try TrustedProxies(["172.16.0.0/12"])
        #expect(narrow.trusts("172.31.0.1") && !narrow.trusts("172.32.0.1") && !narrow.trusts("::ffff:172.32.0.1"))
    }

    @Test(arguments: ["10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0/8", "example.com", "fd00::/129", "10.0.0.1/", "1.2.3.4%eth0"])
    func invalidEntriesAreRefusedAsWritten(entry: String) {
        #expect(throws: TrustedProxies.InvalidEntry(entry: entry)) { try TrustedProxies(["127.0.0.1", entry]) }
    }

    @Test func fromATrustedProxyTheChainIsKeptAndAppendedTo() throws {
        let fields = ForwardedFields(
            peer: "10.0.0.2", proxies: try TrustedProxies(["10.0.0.0/8"]), incomingFor: "203.0.113.9, 10.0.0.1", incomingProto: "https",
            incomingHost: "app.example.com",
            publicProto: "http", publicHost: "gate.internal")
        var expected = ForwardedFields(
            peer: nil, proxies: .none, incomingFor: nil, incomingProto: nil, incomingHost: nil, publicProto: "https", publicHost: "app.example.com")
        expected.forwardedFor = "203.0.113.9, 10.0.0.1, 10.0.0.2"
        expected.realIP = "203.0.113.9"
        #expect(fields == expected)
    }

    @Test func fromAnyoneElseTheClientsValuesAreReplaced() throws {
        let fields = ForwardedFields(
            peer: "198.51.100.4", proxies: try TrustedProxies(["10.0.0.0/8"]), incomingFor: "1.2.3.4", incomingProto: "https",
            incomingHost: "evil.example", publicProto: "http", publicHost: "gate.example")
        #expect(fields.forwardedFor == "198.51.100.4" && fields.proto == "http" && fields.host == "gate.example")
        #expect(fields.realIP == "198.51.100.4")
    }

    @Test func aTrustedProxyWithoutHeadersGetsThePublicValues() throws {
        let fields = ForwardedFields(
            peer: "10.0.0.2", proxies: try TrustedProxies(["10.0.0.2"]), incomingFor: nil, incomingProto: nil, incomingHost: " ",
            publicProto: "https", publicHost: "gate.example")
        #expect(fields.forwardedFor == "10.0.0.2" && fields.proto == "https" && fields.host == "gate.example")
        #expect(fields.realIP == "10.0.0.2")
    }

    /// X-Real-IP behind trusted proxies: the chain read from the right, trusted hops skipped (nginx's
    /// `real_ip_recursive on`); what is no address stops at the nearest trusted hop.
    @Test(arguments: [
        ("203.0.113.9, 10.0.0.1", "203.0.113.9"),  // two trusted hops
        ("198.51.100.1, 203.0.113.9, 10.0.0.1", "203.0.113.9"),  // the client's own claim (left) is not believed
        ("10.0.0.7, 10.0.0.1", "10.0.0.7"),  // trusted all the way: the furthest
        ("unknown, 10.0.0.1", "10.0.0.1"),  // no address: the nearest trusted hop
        ("203.0.113.9:4711, 10.0.0.1", "10.0.0.1"),
        ("", "10.0.0.2"),
    ])
    func realIPBehindTrustedProxies(chain: String, client: String) throws {
        let proxies = try TrustedProxies(["10.0.0.0/8"])
        #expect(ForwardedFields.clientAddress(chain: chain, peer: "10.0.0.2", proxies: proxies) == client)
        let fields = ForwardedFields(
            peer: "10.0.0.2", proxies: proxies, incomingFor: chain, incomingProto: nil, incomingHost: nil, publicProto: "https", publicHost: "g")
        #expect(fields.realIP == client)
    }
}
