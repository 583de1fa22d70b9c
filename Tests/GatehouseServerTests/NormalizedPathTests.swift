import GatehouseCore
import Testing

@testable import GatehouseServer

@Suite("Normalized paths and upstream URLs")
struct NormalizedPathTests {
    func forwarded(_ raw: String, base: String = "http://up.test/base", drop: Int = 2) -> String? {
        let parts = raw.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return try? UpstreamPath.join(base: base, rawPath: parts[0], droppingSegments: drop, query: parts.count > 1 ? parts[1] : nil)
    }

    @Test("segments are decoded, re-encoded by the gateway, dot segments resolved, `//` collapsed")
    func normalizes() {
        #expect(forwarded("/v1/api/a/b") == "http://up.test/base/a/b")
        #expect(forwarded("/v1/api/%61%7e/%2e/b/") == "http://up.test/base/a~/b/")
        #expect(forwarded("/v1/api/a/../b") == "http://up.test/base/b")
        #expect(forwarded("/v1/api/a/b/..") == "http://up.test/base/a/")
        #expect(forwarded("/v1/api//x//y") == "http://up.test/base/x/y")
        #expect(forwarded("/v1//api/x") == "http://up.test/base/x")
        #expect(forwarded("/v1/api/caf%c3%a9%20x") == "http://up.test/base/caf%C3%A9%20x")
        #expect(forwarded("/v1/api") == "http://up.test/base")
        #expect(forwarded("/v1/api/") == "http://up.test/base")
        #expect(forwarded("/v1/api/a", base: "http://up.test") == "http://up.test/a")
        #expect(forwarded("/v1/api", base: "http://up.test/") == "http://up.test/")
    }

    @Test(
        "what cannot be normalized is refused",
        arguments: [
            "/v1/api/%FF", "/v1/api/%C0%AE%C0%AE/x", "/v1/api/%E0%80%AF", "/v1/api/%ED%A0%80", "/v1/api/a%2Fb", "/v1/api/a%5cb",
            "/v1/api/a\\b", "/v1/api/a%00", "/v1/api/%0a", "/v1/api/%C2%85", "/v1/api/..", "/v1/api/a/../../b", "/v1/api/%2e%2e",
            "/v1/api/..;/admin", "/v1/api/.;x", "/v1/api/%", "/v1/api/%4", "/v1/api/%G0",
            // Escapes of `.`, `/`, `\` left after decoding: a backend that decodes twice (or more) reads them.
            "/v1/api/public/%252e%252e/admin/x", "/v1/api/public/..%252fadmin/x", "/v1/api/public/x%252f..%252f..%252fadmin/x",
            "/v1/api/%252E", "/v1/api/a%255cb", "/v1/api/a%255Cb", "/v1/api/%25252e%25252e", "/v1/api/%25%32%65", "/v1/api/%25%32%46x",
            "/v1/api/x%2525252fy",
        ])
    func refuses(_ raw: String) {
        #expect(forwarded(raw) == nil, "\(raw)")
    }

    @Test(
        "a percent that escapes nothing dangerous, once decoded, still passes",
        arguments: [
            ("/v1/api/100%25", "/100%25"), ("/v1/api/%2561dmin", "/%2561dmin"), ("/v1/api/a%2525b", "/a%2525b"), ("/v1/api/%25zz", "/%25zz"),
        ])
    func percentPasses(_ raw: String, _ target: String) {
        #expect(forwarded(raw, base: "http://up.test") == "http://up.test" + target)
    }

    @Test("the query passes as sent; bytes a query may not hold are escaped")
    func query() {
        #expect(forwarded("/v1/api/a?x=1&y=%2F") == "http://up.test/base/a?x=1&y=%2F")
        #expect(forwarded("/v1/api/a?x=%&y=%G1") == "http://up.test/base/a?x=%25&y=%25G1")
        #expect(forwarded("/v1/api/a?q=a/b?c") == "http://up.test/base/a?q=a/b?c")
        #expect(forwarded("/v1/api/a?") == "http://up.test/base/a")
    }

    @Test("the relay's plain-path shortcut gives exactly the normalized target, or declines")
    func plainTargetAgreesWithNormalization() throws {
        // Random paths and queries over an alphabet rich in what normalization changes (`%`, `.`, `/`, `;`, `?`, space).
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab./%2eE;:@!$&'()*+,=-_~?# \\\u{7f}é")
        var taken = 0
        for _ in 0..<20_000 {
            let path = "/" + String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            let query: Substring? =
                Bool.random(using: &generator)
                ? Substring(String((0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
                : nil
            guard let plain = UpstreamPath.plainTarget(basePath: "/base", path: Substring(path), query: query) else { continue }
            taken += 1
            let normalized = try NormalizedPath(raw: Substring(path))
            #expect(plain == UpstreamPath.target(basePath: "/base", path: normalized, query: query), "\(path) ? \(query ?? "-")")
        }
        #expect(taken > 500)
        #expect(UpstreamPath.plainTarget(basePath: "", path: "/a/b/", query: "x=1") == "/a/b/?x=1")
        for declined in ["/", "", "//a", "/a//b", "/./a", "/a/..", "/a/.b", "/%61", "/a b", "/é"] {
            #expect(UpstreamPath.plainTarget(basePath: "/base", path: Substring(declined), query: nil) == nil, "\(declined)")
        }
        #expect(UpstreamPath.plainTarget(basePath: "/base", path: "/a", query: "%zz") == nil)
    }
}
