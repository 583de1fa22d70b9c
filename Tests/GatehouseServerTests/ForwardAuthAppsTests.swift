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

    @Test(
        arguments: [
            ("admin.example.com", "admin", "admin", true),  // the name is the default audience
            ("x.apps.example.com", "tenants", "tenants", false),  // the first app in the file's order wins; its own assertion setting
            ("a.apps.example.com", "tenants", "tenants", false),
            ("ADMIN.example.com.:8443", "admin", "admin", true),  // compared as hosts are
            ("admin.example.com.example", "shadow", "shadow-aud", true),
            ("a.b.apps.example.com", nil, "main", true),  // `*` is one label: backend's
            ("apps.example.com", nil, "main", true),
            ("other.example.com", nil, "main", true),
        ] as [(String, String?, String, Bool)])
    func theOriginalHostPicksTheApp(host: String, app: String?, audience: String, assertion: Bool) {
        let found = Self.table.forwardAuthApp(host: HostPattern.normalized(Substring(host)))
        #expect(found?.name == app)
        let backend = found?.backend ?? Self.table.fallback.backend
        #expect(backend.audience == audience)
        #expect(backend.assertion == assertion)
    }

    @Test func noHostIsBackends() {
        #expect(Self.table.forwardAuthApp(host: nil) == nil)
    }
}
