import Foundation
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
            AccessRule(name: "admin", paths: [try! PathPattern("/admin/**")], methods: ["GET"], allow: .conditions([AccessCondition(subjects: ["root"])])),
            AccessRule(name: "app", paths: [try! PathPattern("/app/**")], allow: .authenticated),
        ],
        fallback: .deny)

    /// What a row expects: the target forwarded to (and whether with identity), or the refusal's status and code.
    enum Expected: Equatable {
        case forward(String, identified: Bool)
        case refuse(Int, String)
    }

    func outcome(_ method: String, _ path: String, query: String? = nil, user: String?, refusal: (any Error)? = nil, policy: AccessPolicy = rules) -> Expected {
        let facts = APIDecision.Facts(method: method, path: Substring(path), query: query.map { Substring($0) })
        let (verdict, _) = APIDecision.decide(facts, session: user.map(Self.session), sessionRefusal: refusal, policy: policy, basePath: "/base")
        switch verdict {
        case .forward(let target, let session): return .forward(target, identified: session != nil)
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
        let judged = APIDecision.decide(facts, session: Self.session("alice"), sessionRefusal: nil, policy: Self.rules, basePath: "").access
        #expect(judged?.decision == .deny(rule: "admin"))
        #expect(judged?.path.encoded == "/admin/x")
        #expect(APIDecision.decide(facts, session: Self.session("alice"), sessionRefusal: nil, policy: AccessPolicy(), basePath: "").access == nil)
    }
}
