import Testing

@testable import GatehouseServer

@Suite("The one reader of the session cookie")
struct SessionCookieParserTests {
    let parser = SessionCookieParser(name: "__Host-gatehouse_session")

    @Test("a well-formed value: the session token is found, and stripped from what is forwarded")
    func wellFormed() {
        #expect(parser.token(in: ["a=1; __Host-gatehouse_session=tok; b=2"]) == "tok")
        #expect(parser.token(in: ["a=1;\t__Host-gatehouse_session=tok"]) == "tok")
        #expect(parser.token(in: ["__Host-gatehouse_session=tok;"]) == "tok")
        #expect(parser.token(in: ["a=1", "__Host-gatehouse_session=second-header"]) == "second-header")
        #expect(parser.forwarded("a=1; __Host-gatehouse_session=tok; b=2") == "a=1; b=2")
        #expect(parser.forwarded("__Host-gatehouse_session=tok") == nil)
        #expect(parser.forwarded("a=1; b=\"q r\"") == "a=1; b=\"q r\"")
        #expect(parser.forwarded("") == nil)
    }

    @Test(
        "names are exact for the session, but any case of the name is stripped",
        arguments: [
            "__host-gatehouse_session=tok", "__HOST-GATEHOUSE_SESSION=tok",
        ])
    func caseVariants(_ value: String) {
        #expect(parser.token(in: [value]) == nil)
        #expect(parser.forwarded("a=1; " + value) == "a=1")
    }

    @Test(
        "a separator other than ';' with SP or HTAB: no session is read, and a value that names it is not forwarded",
        arguments: [
            "a=1; \u{00A0}__Host-gatehouse_session=tok", "a=1; \u{0085}__Host-gatehouse_session=tok", "a=1; \u{3000}__Host-gatehouse_session=tok",
            "a=1;\u{000B}__Host-gatehouse_session=tok", "a=1;\u{000C}__Host-gatehouse_session=tok", "a=1,__Host-gatehouse_session=tok",
            "a=1; __Host-gatehouse_session\u{00A0}=tok", "a=1; __Host-gatehouse_session=tok\u{0000}", "\u{2028}__Host-gatehouse_session=tok",
        ])
    func malformed(_ value: String) {
        #expect(parser.token(in: [value]) == nil, "\(value.unicodeScalars.map { $0.value })")
        #expect(parser.forwarded(value) == nil, "\(value.unicodeScalars.map { $0.value })")
    }

    @Test("a malformed value that does not name the session cookie goes on as it came")
    func malformedOther() {
        #expect(parser.forwarded("a=1; \u{00A0}b=2") == "a=1; \u{00A0}b=2")
        #expect(parser.token(in: ["a=1; \u{00A0}b=2", "__Host-gatehouse_session=tok"]) == "tok")
    }
}
