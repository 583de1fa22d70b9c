import Foundation
import GatehouseConfiguration
import GatehouseCore
import Testing

@testable import GatehouseServer

/// The one decision of `/v1/authz`, without sockets: what both front ends carry out.
@Suite("The one decision of /v1/authz, without sockets")
struct ForwardAuthDecisionTests {
    static let table: UpstreamTable = {
        let configuration = try! GatewayConfiguration.parse(
            """
            backend: {url: "http://127.0.0.1:9000", audience: "main", assertion: true}
            forward_auth:
              apps:
                - {name: "admin", hosts: ["admin.example.com"], forward_access_token: true}
                - {name: "plain", hosts: ["plain.example.com"], assertion: false}
            """, file: "gatehouse.yaml")
        return UpstreamTable(settings: ServerSettings(configuration: configuration))
    }()

    static let rules = AccessPolicy(
        rules: [
            AccessRule(name: "public", paths: [try! PathPattern("/public/**")], allow: .anyone),
            AccessRule(name: "admin", paths: [try! PathPattern("/admin/**")], allow: .conditions([AccessCondition(subjects: ["root"])])),
            AccessRule(name: "app", paths: [try! PathPattern("/app/**")], allow: .authenticated),
        ],
        fallback: .deny)

    /// What a row expects.
    enum Expected: Equatable {
        /// Allowed: the app answered for (`nil`: backend's settings), with identity or not, and whether the access
        /// token must be refreshed first.
        case allow(app: String?, identified: Bool, refresh: Bool)
        /// Refused: status, code, and whether the sign-in page is named.
        case refuse(Int, String, signIn: Bool)
    }

    static let replayed = GatehouseError.invalidDPoPProof("The DPoP proof was used before.")

    @Test(
        "the table: the app by host, the rules, the sign-in page only with a 401, a refresh only where the token is forwarded",
        arguments: [
            ("GET", "gw.example.com", "/public/x", nil, nil, Expected.allow(app: nil, identified: false, refresh: false)),
            ("GET", "gw.example.com", "/public/x", "alice", nil, .allow(app: nil, identified: true, refresh: false)),
            ("GET", "gw.example.com", "/app/x", nil, nil, .refuse(401, "invalid_session", signIn: true)),
            ("POST", "gw.example.com", "/app/x", "alice", nil, .allow(app: nil, identified: true, refresh: false)),
            ("GET", "gw.example.com", "/admin/x", "alice", nil, .refuse(403, "access_denied", signIn: false)),
            ("GET", "gw.example.com", "/admin/x", "root", nil, .allow(app: nil, identified: true, refresh: false)),
            ("GET", "gw.example.com", "/other", "root", nil, .refuse(403, "access_denied", signIn: false)),
            ("GET", "admin.example.com", "/admin/x", "root", nil, .allow(app: "admin", identified: true, refresh: true)),
            ("GET", "admin.example.com", "/public/x", nil, nil, .allow(app: "admin", identified: false, refresh: false)),
            ("GET", "plain.example.com", "/app/x", "alice", nil, .allow(app: "plain", identified: true, refresh: false)),
            // A refused credential (a replayed proof) is no session: open paths still pass, others get its refusal.
            ("GET", "gw.example.com", "/public/x", nil, "replayed", .allow(app: nil, identified: false, refresh: false)),
            ("GET", "gw.example.com", "/app/x", nil, "replayed", .refuse(401, "invalid_dpop_proof", signIn: true)),
            ("GET", "plain.example.com", "/app/x", nil, "store", .refuse(503, "store_unavailable", signIn: false)),
        ] as [(String, String, String, String?, String?, Expected)])
    func table(method: String, host: String, path: String, user: String?, refusal: String?, expected: Expected) throws {
        let original = try ForwardAuthTarget(
            forwardedMethod: method, forwardedURI: path, originalMethod: nil, originalURI: nil, originalURL: nil, ownMethod: "GET",
            ownTarget: "/v1/authz", forwardedHost: host)
        let credential: CredentialOutcome =
            switch (user, refusal) {
            case (let user?, _): .session(APIDecisionTests.session(user), proof: nil)
            case (nil, "replayed"): .refused(Self.replayed)
            case (nil, "store"): .refused(GatehouseError.storeUnavailable("The session store is unavailable."))
            default: .none
            }
        let plan = ForwardAuthDecision.decide(
            original, path: try UpstreamPath.normalized(original.path, droppingSegments: 0), credential: credential, policy: Self.rules,
            upstreams: Self.table, publicURL: "https://gw.example.com")
        let got: Expected
        switch plan.verdict {
        case .allow(let session, _): got = .allow(app: plan.app?.name, identified: session != nil, refresh: false)
        case .allowAfterRefresh: got = .allow(app: plan.app?.name, identified: true, refresh: true)
        case .refuse(let error, let signIn):
            let problem = error as! GatehouseError
            got = .refuse(problem.status, problem.code.rawValue, signIn: signIn != nil)
            if let signIn {
                #expect(
                    signIn == "https://gw.example.com/v1/sign-in?return_to="
                        + PercentEncoding.encode(path.utf8, keeping: PercentEncoding.isUnreserved))
            }
        }
        #expect(got == expected)
        #expect(plan.session?.identity.subject == user)
    }
}
