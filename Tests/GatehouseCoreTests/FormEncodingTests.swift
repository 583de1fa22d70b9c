import Foundation
import GatehouseCore
import Testing

@Suite struct FormEncodingTests {
    /// Pairs flattened for comparison (tuples are not Equatable in arrays).
    static func flat(_ pairs: [(String, String)]) -> [String] { pairs.map { "\($0.0)\u{0}\($0.1)" } }

    @Test("encoding percent-escapes everything except RFC 3986 unreserved characters")
    func encodeEscapes() {
        #expect(FormEncoding.encode([("a b", "x+y"), ("k", "ü/é&=?#")]) == "a%20b=x%2By&k=%C3%BC%2F%C3%A9%26%3D%3F%23")
        #expect(FormEncoding.escape("AZaz09-._~") == "AZaz09-._~")
        #expect(FormEncoding.encode([]) == "")
    }

    @Test(
        "encode then decode returns the same pairs, including +, spaces, %, = and unicode",
        arguments: [
            [("grant_type", "authorization_code"), ("code", "a+b c")],
            [("redirect_uri", "https://app.example/cb?x=1&y=2"), ("note", "100% sure = yes")],
            [("name", "Åsa Ødegård 😀"), ("empty", ""), ("name", "second")],
            [("plus", "+"), ("pct20", "%20"), ("tilde", "~")],
        ])
    func roundTrip(pairs: [(String, String)]) {
        #expect(Self.flat(FormEncoding.decode(FormEncoding.encode(pairs))) == Self.flat(pairs))
    }

    @Test("decoding reads + and %20 as a space and %2B as a plus")
    func decodePlusAndPercent() {
        let decoded = FormEncoding.decode("q=a+b&r=a%20b&s=%2B&t=caf%C3%A9")
        #expect(Self.flat(decoded) == Self.flat([("q", "a b"), ("r", "a b"), ("s", "+"), ("t", "café")]))
    }

    @Test("decoding keeps duplicates in order, reads a bare key as empty and skips empty pairs")
    func decodeEdgeCases() {
        let decoded = FormEncoding.decode("a=1&&flag&a=2&b=x=y")
        #expect(Self.flat(decoded) == Self.flat([("a", "1"), ("flag", ""), ("a", "2"), ("b", "x=y")]))
        #expect(FormEncoding.decode("").isEmpty)
    }

    @Test("appending to a URL without a query starts one with ?")
    func appendingWithoutQuery() {
        #expect(
            FormEncoding.appending([("state", "x y"), ("n", "1")], to: "https://auth.example/authorize")
                == "https://auth.example/authorize?state=x%20y&n=1")
    }

    @Test("appending to a URL with a query continues it with &")
    func appendingWithQuery() {
        #expect(
            FormEncoding.appending([("state", "s")], to: "https://auth.example/authorize?tenant=t1")
                == "https://auth.example/authorize?tenant=t1&state=s")
    }

    @Test("appending nothing leaves the URL unchanged")
    func appendingNothing() {
        #expect(FormEncoding.appending([], to: "https://auth.example/authorize") == "https://auth.example/authorize")
    }
}
