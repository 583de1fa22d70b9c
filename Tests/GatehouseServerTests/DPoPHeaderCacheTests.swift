import Testing

@testable import GatehouseServer

/// The memo of checked proof headers: found by a hash of the header's bytes, and only ever answered for the same
/// bytes — a header that shares a kept one's hash (here every header does) is a miss, never another key's result.
struct DPoPHeaderCacheTests {
    static let kept = "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIn19"

    static func checked(_ thumbprint: String) -> DPoPHeaderCache.Checked {
        DPoPHeaderCache.Checked(alg: "ES256", jwk: ["kty": "EC"], thumbprint: thumbprint, es256: nil)
    }

    @Test(arguments: [false, true])
    func onlyTheSameBytesAreAnswered(everyHeaderCollides: Bool) {
        let cache = everyHeaderCollides ? DPoPHeaderCache(hash: { _ in 7 }) : DPoPHeaderCache()
        cache.keep(Substring(Self.kept).utf8, Self.checked("first"))
        #expect(cache.checked(Substring(Self.kept).utf8)?.thumbprint == "first")
        // The same bytes inside a longer text (a proof's first part) are the same header.
        let proof = Self.kept + ".claims.signature"
        #expect(cache.checked(proof[..<proof.firstIndex(of: ".")!].utf8)?.thumbprint == "first")
        // One byte changed, one byte more or less: another header.
        var changed = Array(Self.kept.utf8)
        changed[changed.count / 2] ^= 0x01
        #expect(cache.checked(Substring(String(decoding: changed, as: UTF8.self)).utf8) == nil)
        #expect(cache.checked(Substring(Self.kept + "A").utf8) == nil)
        #expect(cache.checked(Substring(Self.kept.dropLast()).utf8) == nil)
        #expect(cache.checked(Substring("").utf8) == nil)
    }

    @Test func aFullCacheStartsOver() {
        let cache = DPoPHeaderCache(capacity: 2)
        cache.keep(Substring("a").utf8, Self.checked("a"))
        cache.keep(Substring("b").utf8, Self.checked("b"))
        cache.keep(Substring("c").utf8, Self.checked("c"))
        #expect(cache.checked(Substring("a").utf8) == nil)
        #expect(cache.checked(Substring("c").utf8)?.thumbprint == "c")
    }
}
