import Testing

@testable import GatehouseServer

@Suite("Login-page rewriting")
struct LoginPageRewriterTests {
    let rewriter = LoginPageRewriter(prefix: "/v1/pages/L", origins: ["https://acs.example.test", "https://idp.example.test:8443"])

    @Test("Location: absolute and relative on allowed origins go under the gateway; others are refused")
    func location() {
        #expect(rewriter.location("https://acs.example.test/a/b?x=1", base: "https://acs.example.test/") == "/v1/pages/L/0/a/b?x=1")
        #expect(rewriter.location("/next", base: "https://idp.example.test:8443/login") == "/v1/pages/L/1/next")
        #expect(rewriter.location("step2", base: "https://idp.example.test:8443/flow/step1") == "/v1/pages/L/1/flow/step2")
        #expect(rewriter.location("https://evil.example.test/", base: "https://acs.example.test/") == nil)
        #expect(rewriter.location("https://idp.example.test/", base: "https://acs.example.test/") == nil, "another port is another origin")
        #expect(rewriter.location("javascript:alert(1)", base: "https://acs.example.test/") == nil)
    }

    @Test("HTML: links and forms to allowed origins and root-relative ones stay under the gateway; others untouched")
    func html() {
        let page = """
            <a href="https://acs.example.test/x">x</a><form action="/post"></form><img src='/i.png'>
            <a href="https://evil.example.test/">e</a><a href="//cdn.example.test/y">c</a><a href="rel">r</a>
            <a href="https://idp.example.test:8443">root</a>
            """
        let out = rewriter.html(page, currentOrigin: 0)
        #expect(out.contains("href=\"/v1/pages/L/0/x\""))
        #expect(out.contains("action=\"/v1/pages/L/0/post\""))
        #expect(out.contains("src='/v1/pages/L/0/i.png'"))
        #expect(out.contains("href=\"https://evil.example.test/\""))
        #expect(out.contains("href=\"//cdn.example.test/y\""))
        #expect(out.contains("href=\"rel\""))
        #expect(out.contains("href=\"/v1/pages/L/1/\""))
    }

    @Test("an injected script goes before the first script, even one before <head>")
    func inject() {
        let shim = "<script>window.captured=1</script>"
        let page = "<html><head><title>t</title><script>window.external.Notify('x')</script></head></html>"
        let out = LoginPageRewriter.inject(shim, into: page)
        #expect(out.hasPrefix("<html><head>" + shim))
        let early = "<script>first()</script><html><head></head></html>"
        #expect(LoginPageRewriter.inject(shim, into: early).hasPrefix(shim))
        #expect(LoginPageRewriter.inject(shim, into: "plain").hasPrefix(shim))
    }
}
