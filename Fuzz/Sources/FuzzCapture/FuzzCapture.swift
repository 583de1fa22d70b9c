import FuzzSupport
import GatehouseConfiguration
import GatehouseCore
import GatehouseProviders

/// The `capture` kind reading a login page: the `<title>` (token, `Denied error=`), the `oauth_token`
/// cookie among the page's `Set-Cookie` lines, and the `success_url` match of the page's URL.
private let providers: [any AuthProvider] = ["title", "cookie"].map { source in
    let yaml = """
        id: fuzz\(source)
        kind: capture
        login_url: "https://legacy.test/login"
        allowed_origins: ["https://legacy.test"]
        success_url: "https://legacy.test/welcome*"
        capture: {from: \(source)}
        probe: {url: "https://legacy.test/api/me"}
        """
    let context = ProviderContext(transport: NoTransport(), publicURL: "https://gatehouse.test")
    // A fixed, valid file: a failure here is a bug of the target, not a finding.
    return try! ProviderCatalog.provider(
        from: YAMLDocument(text: yaml, file: "fuzz\(source).yaml"), kinds: ProviderRegistry.kinds, context: context, environment: [:])
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCapture(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    guard let provider = providers[Int(input.selector % 2)] as? any LoginPageProvider else { return 0 }
    let text = input.text
    // The same text as the page, as its cookies, and as its URL.
    _ = provider.capture(url: "https://legacy.test/welcome?lang=en", status: 200, setCookies: text.split(separator: "\n").map(String.init), body: text)
    _ = provider.capture(url: text, status: 200, setCookies: [], body: nil)
    return 0
}
