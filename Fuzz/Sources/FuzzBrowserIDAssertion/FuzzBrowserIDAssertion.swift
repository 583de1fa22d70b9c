@testable import GatehouseProviders
import FuzzSupport

/// The BrowserID backed-assertion and JWS parser (certificates `~` assertion, and the legacy JSON bundle).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBrowserIDAssertion(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    if let assertion = try? BrowserIDBackedAssertion(parsing: input.wholeText) {
        _ = try? assertion.assertion.milliseconds("exp", role: "assertion")
        _ = try? assertion.certificate.milliseconds("iat", role: "certificate")
    }
    _ = BrowserIDAudience(configured: input.wholeText)
    return 0
}
