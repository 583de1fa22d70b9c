import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseDemo
import GatehouseStore
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// Page logins across two gateway instances on one store: every step may land on either instance.
@Suite("Page logins on any instance")
struct LoginPageSharedStoreTests {
    /// Two instances on `store` (the same sealing key), with the login-page stand-ins.
    func withTwo(
        store: @escaping @Sendable () throws -> any SessionStore, _ body: (GatewayInstance, GatewayInstance, StandInACS) async throws -> Void
    ) async throws {
        let acs = StandInACS(realm: LoginPageTests.realm)
        let legacy = StandInLegacySite()
        _ = try await acs.start()
        _ = try await legacy.start()
        do {
            try await StandIns.with { standIns in
                let files = LoginPageTests.files(acs: acs, legacy: legacy)
                let environment = ["ACS_SIGNING_KEY": acs.signingKeyBase64]
                try await GatewayInstance.with(standIns, store: try store(), providerFiles: files, providerEnvironment: environment) { a in
                    try await GatewayInstance.with(standIns, store: try store(), providerFiles: files, providerEnvironment: environment) { b in
                        try await body(a, b, acs)
                    }
                }
            }
        } catch {
            await acs.stop()
            await legacy.stop()
            throw error
        }
        await acs.stop()
        await legacy.stop()
    }

    /// Starts on `a`, shows the form on `b`, posts it on `a` (the site sets its cookies there) and opens the
    /// welcome page on `b`, whose capture needs those cookies. `afterPost` sees the login between the steps.
    func alternating(
        _ a: GatewayInstance, _ b: GatewayInstance, provider: String, query: String = "return_to=/",
        afterPost: (String) async throws -> Void = { _ in }
    ) async throws -> HTTPResult {
        let start = try await a.http.send(.GET, a.url("/v1/auth/\(provider)/pages?\(query)"))
        #expect(start.status == 303)
        let bound = start.bindingHeaders
        let loginPath = try #require(start.location)
        let page = try await b.http.send(.GET, b.url(loginPath), headers: bound)
        #expect(page.status == 200, "the second instance knows the login")
        let posted = try await a.http.send(
            .POST, a.url(loginPath), headers: bound + [("Content-Type", "application/x-www-form-urlencoded")],
            body: Data("user=bob&password=secret".utf8))
        #expect(posted.status == 302)
        try await afterPost(String(loginPath.split(separator: "/")[2]))
        return try await b.http.send(.GET, b.url(try #require(posted.location)), headers: bound)
    }

    @Test("memory store shared: a capture login (cookie, title) and an ACS login alternate instances and end in a session")
    func sharedMemory() async throws {
        let store = MemorySessionStore()
        try await withTwo(store: { store }) { a, b, acs in
            let welcome = try await alternating(a, b, provider: "legacy")
            #expect(welcome.status == 303, "\(welcome.status) \(welcome.text)")
            let cookie = try #require(welcome.headers["set-cookie"].first { $0.hasPrefix(a.gateway.settings.cookie.name + "=") })
            let session = try await a.http.send(.GET, a.url("/v1/session"), headers: [("Cookie", String(cookie.split(separator: ";")[0]))])
            #expect(session.json?["subject"]?.stringValue == "user-bob")

            let verifier = PKCE.makeVerifier()
            let query = FormEncoding.encode([
                ("redirect_uri", GatewayInstance.clientRedirectURI), ("state", "cs"), ("code_challenge", PKCE.challenge(for: verifier)),
                ("code_challenge_method", "S256"),
            ])
            let titled = try await alternating(b, a, provider: "legacytitle", query: query)
            #expect(titled.status == 302)
            let created = try await b.exchange(code: try #require(titled.locationQuery["code"]), verifier: verifier)
            #expect(created.json?[path: "session.subject"]?.stringValue == "user-bob")

            let start = try await a.http.send(.GET, a.url("/v1/auth/azure/pages?return_to=/"))
            let loginPath = try #require(start.location)
            let id = String(loginPath.split(separator: "/")[2])
            let posted = try await b.http.send(
                .POST, b.url(loginPath), headers: start.bindingHeaders + [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data("email=carol%40acs.demo.test".utf8))
            // The ACS result page needs the session cookie the site set on the other instance.
            let result = try await a.http.send(.GET, a.url(try #require(posted.location)), headers: start.bindingHeaders)
            #expect(result.text.contains("window.external.Notify('"))
            let notified = try await b.http.send(
                .POST, b.url("/v1/pages/\(id)/capture"), headers: start.bindingHeaders + [("Content-Type", "text/plain")],
                body: Data(acs.notifyJSON(email: "carol@acs.demo.test").utf8))
            #expect(notified.status == 200)
            // Single use on every instance.
            let again = try await a.http.send(.GET, a.url(loginPath), headers: start.bindingHeaders)
            #expect(again.problemCode == "unknown_login")
        }
    }

    @Test("SQLite file shared by two stores: the login continues on the other instance; at rest the cookies are sealed")
    func sharedSQLite() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-pages-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("gatehouse.sqlite3").path
        try await withTwo(store: { try SQLiteSessionStore(path: path) }) { a, b, _ in
            let welcome = try await alternating(a, b, provider: "legacy") { id in
                // The site set `site_session=s-bob`: stored, but only sealed.
                let record = try #require(try await a.gateway.store.pendingRecord(keyHash: RandomToken.hash(id), purpose: .pageLogin, now: Date()))
                #expect(record.payload.range(of: Data("s-bob".utf8)) == nil)
                #expect(record.payload.range(of: Data("site_session".utf8)) == nil)
                let opened = try CredentialSealer(keys: [GatewayInstance.sealingKey]).open(json: LoginPageJars.Entry.self, from: record.payload)
                #expect(opened.cookies.values.contains { $0["site_session"] == "s-bob" }, "the payload is the sealed state")
                for file in [path, path + "-wal"] {
                    let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
                    #expect(bytes.range(of: Data("site_session=".utf8)) == nil && bytes.range(of: Data("s-bob".utf8)) == nil, "\(file)")
                }
            }
            #expect(welcome.status == 303, "\(welcome.status) \(welcome.text)")
        }
    }

    @Test("one client's bound holds on an instance; a login it finished on the other instance frees the slot")
    func boundAcrossInstances() async throws {
        let store = MemorySessionStore()
        try await withTwo(store: { store }) { a, b, _ in
            var started: [HTTPResult] = []
            for _ in 0..<a.gateway.settings.pageLoginsPerClient {
                let login = try await a.http.send(.GET, a.url("/v1/auth/legacy/pages?return_to=/"))
                #expect(login.status == 303)
                started.append(login)
            }
            let refused = try await a.http.send(.GET, a.url("/v1/auth/legacy/pages?return_to=/"))
            #expect(refused.status == 429)
            // Ended on b (the site refuses the password): a counts it no longer.
            let loginPath = try #require(started[0].location)
            let ended = try await b.http.send(
                .POST, b.url(loginPath), headers: started[0].bindingHeaders + [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data("user=bob&password=wrong".utf8))
            #expect(ended.status == 403)
            let again = try await a.http.send(.GET, a.url("/v1/auth/legacy/pages?return_to=/"))
            #expect(again.status == 303, "\(again.status) \(again.text)")
        }
    }
}
