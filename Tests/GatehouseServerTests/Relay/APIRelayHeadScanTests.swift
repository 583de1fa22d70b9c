import NIOHTTP1
import Testing

@testable import GatehouseServer

/// ``APIRelay/HeadScan``: the one pass over a head's fields that the `/v1/api` claim and the `/v1/authz`
/// answer both read.
@Suite("APIRelay head scan")
struct APIRelayHeadScanTests {
    private static func scan(_ fields: [(String, String)], forwardAuth: Bool = false) -> APIRelay.HeadScan {
        APIRelay.HeadScan(HTTPHeaders(fields), forwardAuth: forwardAuth)
    }

    @Test("counts and joins as the limits and the credential read them")
    func counts() {
        let scan = Self.scan([("Host", "a"), ("HOST", "b"), ("Authorization", "Bearer x"), ("authorization", "y"), ("Origin", "o")])
        #expect(scan.hosts == 2)
        #expect(scan.authorization == "Bearer x, y")
        #expect(scan.origins == 1)
        #expect(
            scan.fieldBytes
                == [("Host", "a"), ("HOST", "b"), ("Authorization", "Bearer x"), ("authorization", "y"), ("Origin", "o")]
                .reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 })
    }

    @Test(
        "body framing: what announces a body, what is not a length, what is not chunked alone",
        arguments: [
            ([("Content-Length", "0")], false, false, false),
            ([("Content-Length", "12")], true, false, false),
            ([("Content-Length", "-1")], true, true, false),
            ([("Content-Length", "1x")], true, true, false),
            ([("Transfer-Encoding", "chunked")], false, false, false),
            ([("Transfer-Encoding", "gzip, chunked")], false, false, true),
        ])
    func framing(fields: [(String, String)], announcesBody: Bool, invalid: Bool, notOnlyChunked: Bool) {
        let scan = Self.scan(fields)
        #expect(scan.announcesBody == announcesBody)
        #expect(scan.invalidContentLength == invalid)
        #expect(scan.notOnlyChunked == notOnlyChunked)
    }

    @Test("a WebSocket handshake's fields")
    func upgrade() {
        let scan = Self.scan([("Connection", "keep-alive, Upgrade"), ("Upgrade", " WebSocket ")])
        #expect(scan.upgrades == 1)
        #expect(scan.websocket)
        #expect(scan.connectionUpgrade)
        #expect(!Self.scan([("Connection", "upgraded"), ("Upgrade", "h2c")]).connectionUpgrade)
        #expect(!Self.scan([("Upgrade", "h2c")]).websocket)
    }

    @Test("forward-auth fields: read only when asked, the first repeated one named whatever its case")
    func forwardAuthFields() {
        let fields = [("X-Forwarded-Uri", "/a"), ("X-Original-URL", "https://h/b"), ("x-forwarded-uri", "/c"), ("Accept-Encoding", "gzip")]
        let asked = Self.scan(fields, forwardAuth: true)
        #expect(asked.forwardAuthFields == ["x-forwarded-uri": "/c", "x-original-url": "https://h/b"])
        #expect(asked.repeatedForwardAuthField == "x-forwarded-uri")
        let notAsked = Self.scan(fields, forwardAuth: false)
        #expect(notAsked.forwardAuthFields.isEmpty)
        #expect(notAsked.repeatedForwardAuthField == nil)
    }
}
