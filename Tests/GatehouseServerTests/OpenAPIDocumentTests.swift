import Foundation
import GatehouseCore
import NIOCore
import Testing

@testable import GatehouseServer

/// The served document is JSON, names this gateway's providers and every problem code (the full check is
/// `Tests/API`: openapi-spec-validator and schemathesis against a running gateway).
@Suite struct OpenAPIDocumentTests {
    private func render(_ ids: [String]) throws -> [String: Any] {
        let buffer = OpenAPIDocument.render(providerIDs: ids)
        return try #require(try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any])
    }

    @Test func theTextIsJSONOfOpenAPI31() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.text.utf8)) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
    }

    @Test func providerIDsBecomeTheParametersEnum() throws {
        let document = try render(["demo", "legacy"])
        let components = try #require(document["components"] as? [String: Any])
        let provider = try #require((components["parameters"] as? [String: Any])?["provider"] as? [String: Any])
        #expect((provider["schema"] as? [String: Any])?["enum"] as? [String] == ["demo", "legacy"])
    }

    @Test func everyGatewayProblemCodeIsListed() throws {
        let document = try render([])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let code = try #require(((schemas["Problem"] as? [String: Any])?["properties"] as? [String: Any])?["code"] as? [String: Any])
        let description = try #require(code["description"] as? String)
        for problem in ProblemCode.gatewayCodes { #expect(description.contains(problem.rawValue)) }
    }
}
