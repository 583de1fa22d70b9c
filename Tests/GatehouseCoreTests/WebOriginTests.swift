import GatehouseCore
import Testing

/// ``WebOrigin``: the origin of a URL as browsers send `Origin`, and what counts as an origin in the
/// configuration.
@Suite struct WebOriginTests {
    @Test(arguments: [
        // Scheme and host in any case; path, query and fragment dropped.
        ("https://App.Example.COM/path?q=1#f", "https://app.example.com"),
        ("HTTPS://app.example.com", "https://app.example.com"),
        ("Http://app.example.com/", "http://app.example.com"),
        // Default ports left out, others kept, whichever scheme they belong to.
        ("https://app.example.com:443/x", "https://app.example.com"),
        ("http://app.example.com:80", "http://app.example.com"),
        ("https://app.example.com:8443", "https://app.example.com:8443"),
        ("http://app.example.com:443", "http://app.example.com:443"),
        ("https://app.example.com:80", "https://app.example.com:80"),
        // Addresses: IPv4 as written, IPv6 in brackets and lowercase.
        ("http://127.0.0.1:9000/base", "http://127.0.0.1:9000"),
        ("http://[::1]:8080/x", "http://[::1]:8080"),
        ("https://[2001:DB8::1]/", "https://[2001:db8::1]"),
        ("https://[2001:db8::1]:443", "https://[2001:db8::1]"),
        // An IDN in its ASCII form stays so.
        ("https://xn--bcher-kva.example/", "https://xn--bcher-kva.example"),
    ])
    func originOfAURL(url: String, origin: String) {
        #expect(WebOrigin.of(url) == origin)
    }

    @Test(arguments: [
        "", "app.example.com", "/relative/path", "//app.example.com/", "?q=1",
        "ftp://app.example.com", "javascript:alert(1)", "data:text/html,x", "file:///etc/passwd",
        "https://", "https:///path", "https:app.example.com", "https://exa mple.com", "https://app.example.com:99999",
        "https://app.example.com:0",
    ])
    func noOriginForWhatIsNotAnAbsoluteHTTPURL(url: String) {
        #expect(WebOrigin.of(url) == nil, "\(url)")
    }

    /// The attack: user info that looks like the trusted host. Its origin is the host after `@`, so it is refused
    /// outright rather than risk a check that reads the part before it.
    @Test(arguments: [
        "https://app.example.com@evil.example/", "https://app.example.com:443@evil.example", "https://user:secret@app.example.com",
        "https://user@app.example.com", "https://:@app.example.com",
    ])
    func noOriginForAURLWithUserInfo(url: String) {
        #expect(WebOrigin.of(url) == nil, "\(url)")
    }

    @Test func aPercentEncodedHostIsDecoded() {
        #expect(WebOrigin.of("https://%61pp.example.com/") == "https://app.example.com")
    }

    @Test(arguments: [
        "https://app.example.com", "https://App.Example.com", "http://app.example.com:8080", "https://app.example.com:443",
        "http://[::1]:8080", "http://127.0.0.1",
    ])
    func originsAsConfigured(text: String) {
        #expect(WebOrigin.isOrigin(text), "\(text)")
    }

    @Test(arguments: [
        "https://app.example.com/", "https://app.example.com/path", "https://app.example.com?q", "https://app.example.com#f",
        "https://user@app.example.com", "https://app.example.com@evil.example", "ftp://app.example.com", "app.example.com", "",
        "https://",
    ])
    func notOriginsAsConfigured(text: String) {
        #expect(!WebOrigin.isOrigin(text), "\(text)")
    }
}
