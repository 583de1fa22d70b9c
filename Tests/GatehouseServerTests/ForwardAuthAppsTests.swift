import GatehouseConfiguration
import GatehouseCore
import Testing

@testable import GatehouseServer

/// `forward_auth.apps:`: which identity settings `/v1/authz` answers with, by the original request's host.
struct ForwardAuthAppsTests {
    static let table: UpstreamTable = {
        let configuration = try! GatewayConfiguration.parse(
            """
            backend: {url: "http://127.0.0.1:9000", audience: "main", assertion: true}
            forward_auth:
              apps:
                - {name: "admin", hosts: ["admin.example.com"]}
                - {name: "tenants", hosts: ["*.apps.example.com"], assertion: false}
                - {name: "shadow", hosts: ["x.apps.example.com", "admin.example.com.example"], audience: "shadow-aud"}
            """, file: "gatehouse.yaml")
        return UpstreamTable(settings: ServerSettings(configuration: configuration))
    }()

    @Test(arguments: [
        ("admin.example.com", "admin", true),  // the name is the default audience
        ("x.apps.example.com", "tenants", false),  // the first app in the file's order wins; its own assertion setting
        ("a.apps.example.com", "tenants", false),
        ("admin.example.com.example", "shadow-aud", true),
        ("a.b.apps.example.com", "main", true),  // `*` is one label: backend's
        ("apps.example.com", "main", true),
        ("other.example.com", "main", true),
    ])
    func theOriginalHostPicksTheApp(host: String, audience: String, assertion: Bool) {
        let backend = Self.table.forwardAuthBackend(host: HostPattern.normalized(Substring(host)))
        #expect(backend.audience == audience)
        #expect(backend.assertion == assertion)
    }

    @Test func noHostIsBackends() {
        #expect(Self.table.forwardAuthBackend(host: nil).audience == "main")
    }
}
