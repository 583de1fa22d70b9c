import GatehouseConfiguration
import GatehouseCore
import Testing

@Suite("upstreams: and access.rules[].hosts")
struct UpstreamsConfigurationTests {
    @Test("an upstream takes backend's keys it does not set; its audience defaults to its name")
    func defaultsFromBackend() throws {
        let configuration = try GatewayConfiguration.parse(
            """
            backend: {url: "http://127.0.0.1:9000", audience: "app", identity_headers: false, forward_access_token: true, timeout_seconds: 7}
            limits: {upstream_timeout_seconds: 20}
            upstreams:
              - {name: "billing", prefix: "/billing", url: "https://billing.internal:8443/v2/"}
              - name: "reports"
                prefix: "/billing/reports"
                url: "http://127.0.0.1:9002"
                keep_prefix: true
                audience: "r"
                identity_headers: true
                timeout_seconds: 3
            """, file: "gatehouse.yaml", environment: [:])
        #expect(configuration.backend.timeoutSeconds == 7)
        let billing = try #require(configuration.upstreams.first)
        #expect(billing.name == "billing" && billing.prefix == "/billing" && !billing.keepPrefix)
        var expected = GatewayConfiguration.Backend(
            url: "https://billing.internal:8443/v2", audience: "billing", identityHeaders: false, assertion: true, forwardAccessToken: true)
        expected.timeoutSeconds = 7
        #expect(billing.backend == expected)
        let reports = configuration.upstreams[1]
        #expect(reports.keepPrefix && reports.backend.audience == "r" && reports.backend.identityHeaders && reports.backend.timeoutSeconds == 3)
    }

    @Test("without timeout_seconds, none is set (limits.upstream_timeout_seconds applies)")
    func noTimeout() throws {
        let configuration = try GatewayConfiguration.parse(
            "upstreams: [{name: \"a\", prefix: \"/a\", url: \"http://127.0.0.1:9001\"}]\n", file: "gatehouse.yaml", environment: [:])
        #expect(configuration.backend.timeoutSeconds == nil && configuration.upstreams[0].backend.timeoutSeconds == nil)
        #expect(configuration.upstreams[0].backend.audience == "a")
    }

    @Test("rules read hosts; every problem is reported at its line")
    func hostsAndErrors() throws {
        let configuration = try GatewayConfiguration.parse(
            """
            access:
              rules:
                - {name: "a", paths: ["/**"], hosts: ["App.Example.com.", "*.apps.example.com"], allow: "authenticated"}
            """, file: "gatehouse.yaml", environment: [:])
        let hosts = try #require(configuration.access.rules.first?.hosts)
        #expect(hosts.count == 2 && hosts[0].matches("app.example.com") && hosts[1].matches("x.apps.example.com"))
        #expect(!hosts[1].matches("apps.example.com") && !hosts[1].matches("x.y.apps.example.com"))

        #expect {
            try GatewayConfiguration.parse(
                """
                upstreams:
                  - {name: "a", prefix: "/a", url: "http://127.0.0.1:9001"}
                  - {name: "a", prefix: "/a", url: "http://127.0.0.1:9002"}
                  - {name: "b", prefix: "/b/", url: "http://127.0.0.1:9003"}
                """, file: "gatehouse.yaml", environment: [:])
        } throws: { error in
            let lines = (error as? ConfigurationErrors)?.errors.map(\.line) ?? []
            return lines == [3, 3, 4]
        }
    }
}
