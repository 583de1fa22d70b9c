import GatehouseConfiguration
import GatehouseCore
import Testing

@Suite("access.rules[].require")
struct StepUpConfigurationTests {
    @Test("either key alone, or both; every problem at its line")
    func parse() throws {
        let configuration = try GatewayConfiguration.parse(
            """
            access:
              rules:
                - {name: "pay", paths: ["/pay/**"], allow: "authenticated", require: {acr: ["urn:mfa"], max_age_seconds: 300}}
                - {name: "fresh", paths: ["/fresh/**"], allow: "authenticated", require: {max_age_seconds: 60}}
            """, file: "gatehouse.yaml", environment: [:])
        #expect(configuration.access.rules[0].require == StepUpRequirement(acr: ["urn:mfa"], maxAgeSeconds: 300))
        #expect(configuration.access.rules[1].require == StepUpRequirement(maxAgeSeconds: 60))
        #expect {
            try GatewayConfiguration.parse(
                """
                access:
                  rules:
                    - {name: "a", paths: ["/a/**"], allow: "authenticated", require: {}}
                    - {name: "b", paths: ["/b/**"], allow: "anyone", require: {max_age_seconds: 5}}
                    - {name: "c", paths: ["/c/**"], allow: "authenticated", require: {acr: ["has space"], max_age_seconds: 0}}
                    - {name: "d", paths: ["/d/**"], allow: "authenticated", require: {acr: ["x"], colour: "red"}}
                """, file: "gatehouse.yaml", environment: [:])
        } throws: { error in
            let lines = (error as? ConfigurationErrors)?.errors.map(\.line) ?? []
            return lines == [3, 4, 5, 5, 6]
        }
    }
}
