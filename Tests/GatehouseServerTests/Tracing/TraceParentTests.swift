import Testing

@testable import GatehouseServer

@Suite("W3C traceparent")
struct TraceParentTests {
    static let valid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    @Test("a valid field: its trace id and sampled flag")
    func valid() throws {
        let parent = try #require(TraceParent(Self.valid))
        #expect(parent.traceID == "0af7651916cd43dd8448eb211c80319c")
        #expect(parent.sampled)
        #expect(parent.value == Self.valid)
        #expect(TraceParent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")?.sampled == false)
        // Other flag bits do not sample; bit 0 does.
        #expect(TraceParent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-02")?.sampled == false)
        #expect(TraceParent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03")?.sampled == true)
    }

    @Test(
        "what W3C Trace Context rejects is treated as absent",
        arguments: [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0",  // short
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-",  // version 00 with more
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",  // uppercase
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",  // zero trace id
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",  // zero parent id
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",  // version ff
            "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",  // separator
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g",  // not hex
            "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x",  // a later version's extra without '-'
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01, 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ])
    func malformed(_ value: String) {
        #expect(TraceParent(value) == nil)
    }

    @Test("a later version may carry more after a '-'")
    func laterVersion() {
        #expect(TraceParent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-comes") != nil)
    }

    @Test("the writer's field parses back, lowercase and zero-padded")
    func write() throws {
        let written = TraceParent.write(traceID: 0x0af7_6519_16cd_43dd, 0x8448_eb21_1c80_319c, parentID: 0xb7ad_6b71_6920_3331, sampled: false)
        #expect(written == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")
        let small = TraceParent.write(traceID: 0, 1, parentID: 2, sampled: true)
        #expect(small == "00-00000000000000000000000000000001-0000000000000002-01")
        #expect(try #require(TraceParent(small)).sampled)
    }
}
