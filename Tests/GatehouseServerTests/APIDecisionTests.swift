import Foundation
import GatehouseConfiguration
import GatehouseCore
import Testing

@testable import GatehouseServer

@Suite("The one decision of /v1/api, without sockets")
struct APIDecisionTests {
    static func session(_ subject: String) -> ActiveSession {
        let now = Date()
        let record = SessionRecord(
            id: "s-\(subject)", tokenHash: "h", provider: "oidc", subject: subject, identity: Data(), sealedCredential: Data(),
            createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(60))
        return ActiveSession(record: record, identity: Identity(subject: subject), credential: Credential(accessToken: "a", issuedAt: now))
    }

    static let rules = AccessPolicy(
        rules: [
            AccessRule(name: "public", paths: [try! PathPattern("/public/**")], allow: .anyone),
            AccessRule(
                name: "admin", paths: [try! PathPattern("/admin/**")], methods: ["GET"], allow: .conditions([AccessCondition(subjects: ["root"])])),
            AccessRule(name: "app", paths: [try! PathPattern("/app/**")], allow: .authenticated),
        ],
        fallback: .deny)

    /// What a row expects: the target forwarded to (and whether with identity), or the refusal's status and code.
    enum Expected: Equatable {
        case forward(String, identified: Bool)
        case refuse(Int, String)
    }

    /// `backend` only, at `/base`.
    static let single: UpstreamTable = {
        var settings = ServerSettings(publicURL: "http://gw")
        settings.backend.url = "http://backend:9000/base"
        return UpstreamTable(settings: settings)
    }()

    /// `backend` at `/base` and three named upstreams: `billing` (`/billing`), `reports` (`/billing/reports`,
    /// kept prefix, path `/r`), `api-v2` (`/v2/api`).
    static let several: UpstreamTable = {
        var settings = ServerSettings(publicURL: "http://gw")
        settings.backend.url = "http://backend:9000/base"
        settings.upstreamTimeout = 30
        func backend(_ url: String, _ audience: String, timeout: TimeInterval? = nil) -> ServerSettings.BackendSettings {
            var backend = ServerSettings.BackendSettings()
            backend.url = url
            backend.audience = audience
            backend.timeout = timeout
            return backend
        }
        settings.upstreams = [
            .init(name: "billing", prefix: "/billing", backend: backend("http://billing:9001", "billing", timeout: 2)),
            .init(name: "reports", prefix: "/billing/reports", keepPrefix: true, backend: backend("http://reports:9002/r", "reports")),
            .init(name: "api-v2", prefix: "/v2/api", backend: backend("https://v2.internal/x/", "v2")),
        ]
        return UpstreamTable(settings: settings)
    }()

    func outcome(
        _ method: String, _ path: String, query: String? = nil, user: String?, refusal: (any Error)? = nil, policy: AccessPolicy = rules,
        upstreams: UpstreamTable = single, host: String? = nil
    ) -> Expected {
        let facts = APIDecision.Facts(method: method, path: Substring(path), query: query.map { Substring($0) }, host: host)
        let credential: CredentialOutcome = user.map { .session(Self.session($0), proof: nil) } ?? refusal.map { .refused($0) } ?? .none
        switch APIDecision.decide(facts, credential: credential, policy: policy, upstreams: upstreams).verdict {
        case .forward(let forward):
            let (target, session, upstream) = (forward.target, forward.session, forward.upstream)
            #expect(upstream.index == APIDecision.route(facts, upstreams: upstreams).upstream.index, "the front ends' early choice is the decision's")
            return .forward(upstream.isDefault ? target : "\(upstream.name):\(target)", identified: session != nil)
        case .refuse(let error):
            let problem = error as! GatehouseError
            return .refuse(problem.status, problem.code.rawValue)
        }
    }

    static let table: [(String, String, String?, Expected)] = [
        ("GET", "/public/x", nil, .forward("/base/public/x", identified: false)),
        ("GET", "/public/x", "root", .forward("/base/public/x", identified: true)),
        ("GET", "/admin/x", "root", .forward("/base/admin/x", identified: true)),
        ("HEAD", "/admin/x", "root", .forward("/base/admin/x", identified: true)),
        ("HEAD", "/admin/x", "alice", .refuse(403, "access_denied")),
        ("POST", "/admin/x", "root", .refuse(403, "access_denied")),  // the GET rule does not cover POST; the default denies
        ("GET", "/admin/x", nil, .refuse(401, "invalid_session")),
        ("GET", "/app/x", "alice", .forward("/base/app/x", identified: true)),
        ("GET", "/app/x", nil, .refuse(401, "invalid_session")),
        ("GET", "/other", "alice", .refuse(403, "access_denied")),
        ("GET", "/app/../admin/x", "alice", .refuse(403, "access_denied")),
        ("GET", "/%61dmin/x", "alice", .refuse(403, "access_denied")),
        ("GET", "/%2561dmin/x", "alice", .refuse(403, "access_denied")),
        ("GET", "/public/%252e%252e/admin/x", nil, .refuse(400, "invalid_path")),
        ("GET", "/public/../../x", "alice", .refuse(400, "invalid_path")),
        ("GET", "/public//a/./b/", nil, .forward("/base/public/a/b/", identified: false)),
        ("GET", "/public/caf%C3%A9", nil, .forward("/base/public/caf%C3%A9", identified: false)),
    ]

    @Test("the table: forward targets, identity, refusals", arguments: table.indices)
    func row(_ index: Int) {
        let (method, path, user, expected) = Self.table[index]
        #expect(outcome(method, path, user: user) == expected, "\(method) \(path) as \(user ?? "nobody")")
    }

    @Test("without a session and without a rule open to anyone, the credential's refusal comes before the path is read")
    func refusalBeforePath() {
        let open = AccessPolicy()
        #expect(outcome("GET", "/%2e%2e/x", user: nil, policy: open) == .refuse(401, "invalid_session"))
        let bound = GatehouseError.invalidToken("bound")
        #expect(outcome("GET", "/x", user: nil, refusal: bound, policy: open) == .refuse(401, "invalid_token"))
        // With a public rule the path is read first: an unusable credential is no session, and public paths pass.
        #expect(outcome("GET", "/public/x", user: nil, refusal: bound) == .forward("/base/public/x", identified: false))
        #expect(outcome("GET", "/app/x", user: nil, refusal: bound) == .refuse(401, "invalid_token"))
    }

    @Test("without rules every session reaches every path that normalizes; the query is kept")
    func openPolicy() {
        let open = AccessPolicy()
        #expect(outcome("DELETE", "/anything/x", query: "a=1&b", user: "alice", policy: open) == .forward("/base/anything/x?a=1&b", identified: true))
        #expect(outcome("GET", "/a/%2e%2e/b", user: "alice", policy: open) == .forward("/base/b", identified: true))
        #expect(outcome("GET", "/a%252fb", user: "alice", policy: open) == .refuse(400, "invalid_path"))
    }

    @Test("the audit gets the decision and the normalized path judged, only when rules were consulted")
    func auditFacts() {
        let facts = APIDecision.Facts(method: "GET", path: "/app/../admin/x", query: nil)
        let judged = APIDecision.decide(facts, credential: .session(Self.session("alice"), proof: nil), policy: Self.rules, upstreams: Self.single)
            .access
        #expect(judged?.decision == .deny(rule: "admin"))
        #expect(judged?.path.encoded == "/admin/x")
        #expect(
            APIDecision.decide(facts, credential: .session(Self.session("alice"), proof: nil), policy: AccessPolicy(), upstreams: Self.single).access
                == nil)
    }

    /// Several upstreams, open policy: (path, query, expected target as `name:target`, or the default's target).
    static let upstreamTable: [(String, String?, Expected)] = [
        ("/billing/invoices/7", "a=1", .forward("billing:/invoices/7?a=1", identified: true)),
        ("/billing", nil, .forward("billing:/", identified: true)),
        ("/billing/", nil, .forward("billing:/", identified: true)),
        ("/billingx/y", nil, .forward("/base/billingx/y", identified: true)),  // whole segments only
        ("/Billing/y", nil, .forward("/base/Billing/y", identified: true)),
        ("/billing/reports/q1", nil, .forward("reports:/r/billing/reports/q1", identified: true)),  // the longest prefix, kept
        ("/billing/reportsx", nil, .forward("billing:/reportsx", identified: true)),
        ("/billing/./reports/../reports/q2", nil, .forward("reports:/r/billing/reports/q2", identified: true)),  // normalized first
        ("/%62illing/x", nil, .forward("billing:/x", identified: true)),
        ("/billing//x", nil, .forward("billing:/x", identified: true)),
        ("/billing/../admin", nil, .forward("/base/admin", identified: true)),  // never stays on billing by its raw prefix
        ("/v2/api/things", nil, .forward("api-v2:/x/things", identified: true)),
        ("/v2/api", "q=%zz", .forward("api-v2:/x?q=%25zz", identified: true)),
        ("/v2/other", nil, .forward("/base/v2/other", identified: true)),
        ("/billing/%2e%2e/%2e%2e/x", nil, .refuse(400, "invalid_path")),
    ]

    @Test("several upstreams: the longest whole-segment prefix of the normalized path, stripped unless kept", arguments: upstreamTable.indices)
    func upstreamRow(_ index: Int) {
        let (path, query, expected) = Self.upstreamTable[index]
        #expect(outcome("GET", path, query: query, user: "alice", policy: AccessPolicy(), upstreams: Self.several) == expected, "\(path)")
    }

    @Test("each upstream has its own audience, timeout and label; backend's timeout is the limit's")
    func upstreamSettings() {
        let all = Self.several.all
        #expect(all.map(\.name) == ["backend", "billing", "reports", "api-v2"])
        #expect(all.map(\.backend.audience) == ["backend", "billing", "reports", "v2"])
        #expect(all.map(\.timeout) == [30, 2, 30, 30])
        #expect(all[3].origin == "https://v2.internal" && all[3].basePath == "/x")
    }

    @Test("rules match the path with its prefix, on the upstream's path too")
    func rulesOnPrefixedPaths() {
        let policy = AccessPolicy(
            rules: [
                AccessRule(
                    name: "billing-admin", paths: [try! PathPattern("/billing/admin/**")], allow: .conditions([AccessCondition(subjects: ["root"])]))
            ],
            fallback: .authenticated)
        #expect(outcome("GET", "/billing/admin/x", user: "alice", policy: policy, upstreams: Self.several) == .refuse(403, "access_denied"))
        #expect(outcome("GET", "/billing/x/../admin/x", user: "alice", policy: policy, upstreams: Self.several) == .refuse(403, "access_denied"))
        #expect(
            outcome("GET", "/billing/admin/x", user: "root", policy: policy, upstreams: Self.several)
                == .forward("billing:/admin/x", identified: true))
    }

    static let hostRules = AccessPolicy(
        rules: [
            AccessRule(name: "app", paths: [try! PathPattern("/**")], hosts: [HostPattern("app.example.com")!], allow: .authenticated),
            AccessRule(name: "tenants", paths: [try! PathPattern("/**")], hosts: [HostPattern("*.apps.example.com")!], allow: .anyone),
        ],
        fallback: .deny)

    /// (host as sent, user, expected)
    static let hostTable: [(String?, String?, Expected)] = [
        ("app.example.com", "alice", .forward("/base/x", identified: true)),
        ("APP.Example.COM.:8443", "alice", .forward("/base/x", identified: true)),
        ("app.example.com", nil, .refuse(401, "invalid_session")),
        ("a.apps.example.com", nil, .forward("/base/x", identified: false)),
        ("a.b.apps.example.com", "alice", .refuse(403, "access_denied")),  // `*` is one label
        ("apps.example.com", "alice", .refuse(403, "access_denied")),
        ("evilapp.example.com", "alice", .refuse(403, "access_denied")),
        ("app.example.com.evil.net", "alice", .refuse(403, "access_denied")),
        (nil, "alice", .refuse(403, "access_denied")),  // a rule with hosts never matches a request without one
        ("", "alice", .refuse(403, "access_denied")),
    ]

    @Test("rules with hosts: exact names, `*` as one first label, without port and trailing dot, in any case", arguments: hostTable.indices)
    func hostRow(_ index: Int) {
        let (host, user, expected) = Self.hostTable[index]
        #expect(outcome("GET", "/x", user: user, policy: Self.hostRules, host: host) == expected, "\(host ?? "no host")")
    }

    @Test("the host judged on /v1/api: a trusted proxy's X-Forwarded-Host, else the request's own")
    func hostOfRequest() {
        #expect(APIDecision.host(own: "gw.example.com", forwarded: "app.example.com, other", trusted: true) == "app.example.com")
        #expect(APIDecision.host(own: "gw.example.com", forwarded: "app.example.com", trusted: false) == "gw.example.com")
        #expect(APIDecision.host(own: "gw.example.com", forwarded: nil, trusted: true) == "gw.example.com")
    }

    @Test("host patterns that are refused")
    func badHostPatterns() {
        for bad in ["", "*", "*.", "a.*.example.com", "*example.com", "app.example.com:443", "a b", "-a.example.com", "**.example.com", "a/b"] {
            #expect(HostPattern(bad) == nil, "\(bad)")
        }
        #expect(HostPattern("app.example.com.") != nil)
        #expect(HostPattern("[::1]") != nil)
    }
}
