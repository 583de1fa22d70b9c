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

    @Test func fromATrustedProxyTheChainIsKeptAndAppendedTo() {
        let fields = ForwardedFields(
            peer: "10.0.0.2", trusted: true, incomingFor: "203.0.113.9, 10.0.0.1", incomingProto: "https", incomingHost: "app.example.com",
            publicProto: "http", publicHost: "gate.internal")
        #expect(fields == ForwardedFields(peer: nil, trusted: false, incomingFor: nil, incomingProto: nil, incomingHost: nil, publicProto: "https", publicHost: "app.example.com").with(for: "203.0.113.9, 10.0.0.1, 10.0.0.2"))
    }

    @Test func fromAnyoneElseTheClientsValuesAreReplaced() {
        let fields = ForwardedFields(
            peer: "198.51.100.4", trusted: false, incomingFor: "1.2.3.4", incomingProto: "https", incomingHost: "evil.example",
            publicProto: "http", publicHost: "gate.example")
        #expect(fields.forwardedFor == "198.51.100.4" && fields.proto == "http" && fields.host == "gate.example")
    }

    @Test func aTrustedProxyWithoutHeadersGetsThePublicValues() {
        let fields = ForwardedFields(
            peer: "10.0.0.2", trusted: true, incomingFor: nil, incomingProto: nil, incomingHost: " ", publicProto: "https", publicHost: "gate.example")
        #expect(fields.forwardedFor == "10.0.0.2" && fields.proto == "https" && fields.host == "gate.example")
    }
}

extension ForwardedFields {
    fileprivate func with(for value: String) -> ForwardedFields {
        var copy = self
        copy.forwardedFor = value
        return copy
    }
}
