import GatehouseCore
import Testing

@Suite("Access policy: conditions, path patterns, first match")
struct AccessPolicyTests {
    static let alice = Identity(
        subject: "u-alice", email: "Alice@Example.com", groups: ["staff", "admins"], claims: ["email_verified": "true", "tier": "gold"])
    static let mallory = Identity(subject: "u-mallory", email: "mallory@evil-example.com", groups: ["staff"], claims: ["email_verified": "false"])

    private func path(_ text: String) -> [Substring] { text.split(separator: "/") }

    @Test("every condition key, lists as ANY, keys as ALL")
    func conditionKeys() {
        let cases: [(AccessCondition, Bool, Bool)] = [
            (AccessCondition(providers: ["oidc"]), true, true),
            (AccessCondition(providers: ["spid"]), false, false),
            (AccessCondition(subjects: ["u-x", "u-alice"]), true, false),
            (AccessCondition(emails: ["alice@example.com"]), true, false),  // any case
            (AccessCondition(emailDomains: ["EXAMPLE.com"]), true, false),  // never a suffix: evil-example.com
            (AccessCondition(emailDomains: ["example.com", "evil-example.com"]), true, true),
            (AccessCondition(emailVerified: true), true, false),
            (AccessCondition(emailVerified: false), false, true),
            (AccessCondition(groups: ["admins"]), true, false),
            (AccessCondition(groups: ["nobody", "staff"]), true, true),
            (AccessCondition(claims: ["tier": ["silver", "gold"]]), true, false),
            (AccessCondition(claims: ["tier": ["gold"], "missing": ["x"]]), false, false),
            (AccessCondition(providers: ["oidc"], groups: ["admins"]), true, false),  // ALL keys
            (AccessCondition(providers: ["spid"], groups: ["admins"]), false, false),
        ]
        for (condition, forAlice, forMallory) in cases {
            #expect(condition.matches(provider: "oidc", identity: Self.alice) == forAlice, "\(condition)")
            #expect(condition.matches(provider: "oidc", identity: Self.mallory) == forMallory, "\(condition)")
        }
        #expect(AccessCondition().isEmpty)
    }

    @Test("patterns: `*` one segment, a final `**` any depth including none, literals folded")
    func patterns() throws {
        let admin = try PathPattern("/admin/**")
        for yes in [
            "/admin", "/admin/", "/admin/x", "/admin/x/y", "/ADMIN/x", "/admin./x", "/Admin /x", "/admin;jsessionid=1/x", "/%61dmin/x",
            "/%41DMIN;a/x",
        ] {
            #expect(admin.matches(path(yes)), "\(yes)")
        }
        for no in ["/", "/administrator", "/x/admin", "/adm"] { #expect(!admin.matches(path(no)), "\(no)") }
        let one = try PathPattern("/users/*/profile")
        #expect(one.matches(path("/users/42/profile")))
        #expect(!one.matches(path("/users/profile")))
        #expect(!one.matches(path("/users/1/2/profile")))
        #expect(try PathPattern("/").matches([]))
        #expect(!(try PathPattern("/").matches(path("/x"))))
        #expect(try PathPattern("/**").matches([]))
        #expect(throws: PathPatternError.self) { try PathPattern("admin") }
        #expect(throws: PathPatternError.self) { try PathPattern("/a/**/b") }
        #expect(throws: PathPatternError.self) { try PathPattern("/a*") }
    }

    static let policy = AccessPolicy(
        login: [],
        rules: [
            AccessRule(name: "health", paths: [try! PathPattern("/health"), try! PathPattern("/public/**")], allow: .anyone),
            AccessRule(
                name: "admin", paths: [try! PathPattern("/admin/**")], methods: ["GET", "POST"],
                allow: .conditions([AccessCondition(emails: ["alice@example.com"]), AccessCondition(providers: ["oidc"], groups: ["ops"])])),
            AccessRule(name: "admin writes", paths: [try! PathPattern("/admin/**")], allow: .conditions([AccessCondition(subjects: ["root"])])),
            AccessRule(name: "app", paths: [try! PathPattern("/app/**")], allow: .authenticated),
        ],
        fallback: .deny)

    @Test("the first matching rule decides; methods narrow a rule; the fallback applies when none matches")
    func firstMatch() {
        let p = Self.policy
        let alice = (provider: "oidc", identity: Self.alice)
        let mallory = (provider: "oidc", identity: Self.mallory)
        #expect(p.decide(method: "GET", path: path("/public/a"), user: nil) == .allow(rule: "health"))
        #expect(p.decide(method: "GET", path: path("/health"), user: nil) == .allow(rule: "health"))
        #expect(p.decide(method: "GET", path: path("/admin/x"), user: nil) == .needsSession)
        #expect(p.decide(method: "GET", path: path("/admin/x"), user: alice) == .allow(rule: "admin"))
        #expect(p.decide(method: "GET", path: path("/admin/x"), user: mallory) == .deny(rule: "admin"))
        // DELETE is not the first rule's: the second decides.
        #expect(p.decide(method: "DELETE", path: path("/admin/x"), user: alice) == .deny(rule: "admin writes"))
        #expect(p.decide(method: "GET", path: path("/app"), user: mallory) == .allow(rule: "app"))
        #expect(p.decide(method: "GET", path: path("/other"), user: alice) == .deny(rule: "default"))
        #expect(p.decide(method: "GET", path: path("/other"), user: nil) == .needsSession)
        let open = AccessPolicy()
        #expect(open.isOpenToSessions)
        #expect(open.decide(method: "GET", path: path("/anything"), user: alice) == .allow(rule: nil))
        #expect(open.decide(method: "GET", path: path("/anything"), user: nil) == .needsSession)
        #expect(p.hasAnonymousRules && !p.isOpenToSessions)
    }

    @Test("a rule that lists GET also judges HEAD (the backend's GET handler runs it); one without GET does not")
    func headFollowsGet() {
        let p = Self.policy
        let mallory = (provider: "oidc", identity: Self.mallory)
        let alice = (provider: "oidc", identity: Self.alice)
        // Without the rule's HEAD, mallory's HEAD would fall to "admin writes" and its own verdict.
        #expect(p.decide(method: "HEAD", path: path("/admin/x"), user: mallory) == .deny(rule: "admin"))
        #expect(p.decide(method: "HEAD", path: path("/admin/x"), user: alice) == .allow(rule: "admin"))
        let postOnly = AccessRule(name: "writes", paths: [try! PathPattern("/**")], methods: ["POST"], allow: .anyone)
        #expect(!postOnly.applies(method: "HEAD", path: path("/x")))
        #expect(
            AccessRule(name: "reads", paths: [try! PathPattern("/**")], methods: ["GET"], allow: .anyone).applies(method: "HEAD", path: path("/x")))
    }

    @Test("access.login: empty lets anyone in; otherwise ANY condition")
    func login() {
        #expect(AccessPolicy().permitsLogin(provider: "x", identity: Self.mallory))
        let p = AccessPolicy(login: [AccessCondition(emailDomains: ["example.com"], emailVerified: true), AccessCondition(providers: ["spid"])])
        #expect(p.permitsLogin(provider: "oidc", identity: Self.alice))
        #expect(!p.permitsLogin(provider: "oidc", identity: Self.mallory))
        #expect(p.permitsLogin(provider: "spid", identity: Self.mallory))
    }

    @Test("return_to: only the listed origins, compared as browsers spell them; user info and backslashes refused")
    func returnToOrigins() {
        let policy = AccessPolicy(returnToOrigins: ["https://App.Example.test:443", "http://[::1]:8080"])
        for target in ["https://app.example.test/after?x=1", "HTTPS://APP.example.test:443/", "http://[::1]:8080/x"] {
            #expect(policy.allowsReturn(to: target), "\(target)")
        }
        for target in [
            "https://app.example.test@evil.example/", "https://evil.example/", "https://app.example.test:8443/", "http://app.example.test/",
            "https://app.example.test\\@evil.example/", "https://app.example.test/\u{0A}x", "//app.example.test/", "/relative",
        ] {
            #expect(!policy.allowsReturn(to: target), "\(target)")
        }
        #expect(!AccessPolicy().allowsReturn(to: "https://app.example.test/"))
    }
}
