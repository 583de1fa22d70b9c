import Foundation
import GatehouseCore
import NIOCore

/// The OpenAPI 3.1 document of the thin-client API, served at `GET /openapi.json`.
///
/// `openapi.json` is the contract (`docs/api.md` explains it in prose; the tests validate it and run
/// schemathesis against a running gateway). Two parts are filled in when it is served: the configured
/// provider ids (an `enum` on every `provider` parameter) and the gateway's own problem codes.
enum OpenAPIDocument {
    /// The document for a gateway with these providers.
    static func render(providerIDs: [String]) -> ByteBuffer {
        // Parsed on each request: it is not on a hot path, and nothing non-Sendable is kept around.
        guard var document = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            return ByteBuffer(string: text)
        }
        if var components = document["components"] as? [String: Any],
            var parameters = components["parameters"] as? [String: Any],
            var provider = parameters["provider"] as? [String: Any],
            var schemas = components["schemas"] as? [String: Any],
            var problem = schemas["Problem"] as? [String: Any],
            var properties = problem["properties"] as? [String: Any],
            var code = properties["code"] as? [String: Any]
        {
            if !providerIDs.isEmpty { provider["schema"] = ["type": "string", "enum": providerIDs] }
            parameters["provider"] = provider
            components["parameters"] = parameters
            code["description"] =
                "Stable. The gateway's own: " + ProblemCode.gatewayCodes.map(\.rawValue).joined(separator: ", ")
                + "; a provider kind may add its own refusal codes (e.g. `assertion_expired`)."
            properties["code"] = code
            problem["properties"] = properties
            schemas["Problem"] = problem
            components["schemas"] = schemas
            document["components"] = components
        }
        guard let data = try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return ByteBuffer(string: text)
        }
        return ByteBuffer(bytes: data)
    }

    /// The document as written (`openapi.json` beside this file, embedded in the binary by SwiftPM's
    /// `.embedInCode`: no resource bundle to ship next to it); `render` fills in the parts that depend on the
    /// configuration.
    static let text = String(decoding: PackageResources.openapi_json, as: UTF8.self)
}
