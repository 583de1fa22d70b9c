import FuzzSupport
import Foundation
import GatehouseProviders

private let key = Data(repeating: 7, count: 32)

/// ACS: the Simple Web Token validator (selector even) and the `window.external.Notify` JSON with its
/// HTML-escaped `securityToken` (selector 1 mod 4), or the `securityToken` alone (3 mod 4).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzACSToken(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    if input.selector % 2 == 0 {
        _ = try? SimpleWebToken.validate(
            input.text, key: key, issuer: "https://issuer.test/", audiences: ["urn:gatehouse:fuzz"],
            now: Date(timeIntervalSince1970: 1_800_000_000), clockSkew: 300)
    } else if input.selector % 4 == 1 {
        _ = try? ACSNotifyPayload(json: input.text)
    } else {
        _ = try? ACSNotifyPayload.token(fromSecurityToken: input.text)
    }
    return 0
}
