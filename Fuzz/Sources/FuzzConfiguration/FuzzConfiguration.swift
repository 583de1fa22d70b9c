import Foundation
import FuzzSupport
import GatehouseConfiguration
import GatehouseCore
import GatehouseProviders

private let context = ProviderContext(transport: NoTransport(), publicURL: "https://gatehouse.test")

/// The configuration loader: `gatehouse.yaml` (selector even) and a provider file of any kind (odd), with
/// no environment. Every outcome is a configuration or `ConfigurationErrors`; nothing may crash.
/// The file is named after its `id:` line, as the loader requires, so that inputs get past that check.
private func fileName(_ text: String) -> String {
    for line in text.split(separator: "\n") where line.hasPrefix("id:") {
        let id = line.dropFirst(3).trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
        if !id.isEmpty, !id.contains("/") { return id }
    }
    return "fuzz"
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    if input.selector % 2 == 0 {
        _ = try? GatewayConfiguration.parse(input.text, file: "/fuzz/gatehouse.yaml", environment: [:])
    } else if let document = try? YAMLDocument(text: input.text, file: "/fuzz/Providers/\(fileName(input.text)).yaml") {
        _ = try? ProviderCatalog.provider(from: document, kinds: ProviderRegistry.kinds, context: context, environment: [:])
    }
    return 0
}
