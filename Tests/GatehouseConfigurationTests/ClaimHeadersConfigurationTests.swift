import GatehouseConfiguration
import GatehouseCore
import Testing

@Suite("identity_headers: {claims: …}")
struct ClaimHeadersConfigurationTests {
    @Test("the mapping form names fields and claims in the order written and turns the identity headers on; upstreams inherit it")
    func mappingForm() throws {
        let configuration = try GatewayConfiguration.parse(
            """
            backend:
              url: "http://127.0.0.1:9000"
              identity_headers: {claims: {"X-User-Department": "department", "X-Roles": "roles"}}
            upstreams:
              - {name: "a", prefix: "/a", url: "http://127.0.0.1:9001"}
              - {name: "b", prefix: "/b", url: "http://127.0.0.1:9002", identity_headers: {claims: {"X-Tenant": "tenant_id"}}}
              - {name: "c", prefix: "/c", url: "http://127.0.0.1:9003", identity_headers: false}
            """, file: "gatehouse.yaml", environment: [:])
        #expect(configuration.backend.identityHeaders)
        #expect(
            configuration.backend.claimHeaders == [
                .init(name: "X-User-Department", claim: "department"), .init(name: "X-Roles", claim: "roles"),
            ])
        #expect(configuration.upstreams[0].backend.claimHeaders == configuration.backend.claimHeaders)
        #expect(configuration.upstreams[1].backend.claimHeaders == [.init(name: "X-Tenant", claim: "tenant_id")])
        #expect(!configuration.upstreams[2].backend.identityHeaders)
    }

    @Test("every bad field name is reported at its line, with the others: the gateway's own, reserved, '_', twice, not a token, no claim")
    func errors() throws {
        #expect {
            try GatewayConfiguration.parse(
                """
                backend:
                  identity_headers:
                    claims:
                      "X-Gatehouse-Subject": "sub"
                      "Authorization": "sub"
                      "X_Tenant": "tenant"
                      "X-Dept": "department"
                      "x-dept": "department"
                      "X Dept": "department"
                      "X-Empty": ""
                      "X-Forwarded-User": "sub"
                limits: {max_body_bytes: -1}
                """, file: "gatehouse.yaml", environment: [:])
        } throws: { error in
            let lines = (error as? ConfigurationErrors)?.errors.map(\.line) ?? []
            return lines == [4, 5, 6, 8, 9, 10, 11, 12]
        }
        #expect {
            try GatewayConfiguration.parse("backend: {identity_headers: {department: \"X-D\"}}\n", file: "gatehouse.yaml", environment: [:])
        } throws: { error in
            let messages = (error as? ConfigurationErrors)?.errors.map(\.message) ?? []
            return messages.contains { $0.contains("claims") }
        }
    }
}
