import Foundation
import Testing

@testable import GatehouseServer

@Suite("The Date field of the router's answers")
struct HTTPDateTests {
    @Test(
        "an IMF-fixdate, as RFC 9110 §5.6.7 writes it",
        arguments: [
            (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
            (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
            (1_798_761_599, "Thu, 31 Dec 2026 23:59:59 GMT"),
        ])
    func format(second: Int, expected: String) {
        #expect(HTTPDate.format(second) == expected)
    }

    @Test("now is the current second's")
    func now() {
        let date = HTTPDate()
        let before = HTTPDate.format(Int(Date().timeIntervalSince1970))
        let now = date.now
        let after = HTTPDate.format(Int(Date().timeIntervalSince1970))
        #expect(now == before || now == after)
    }
}
