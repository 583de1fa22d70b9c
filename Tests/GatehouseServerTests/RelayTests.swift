import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseStore
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// The event-loop relay of `/v1/api` (`Sources/GatehouseServer/Relay`), over real loopback connections: what it
/// claims and what reaches the backend. The rules of an exchange (the retry rule, the timeout, the body limit, the
/// order among the router's answers) are pinned once, on the state machine and ``EmbeddedRelay``.
@Suite("Event-loop relay")
struct RelayTests {
    @Test("a session in memory is relayed: identity headers on, credentials off; refusals stay the router's")
    func relaysCachedSessions() async throws {
        try await RelayFixture.with { fixture in
            let gw = fixture.gateway
            let token = fixture.token
            let before = try await fixture.relayed()
            // The first call reads the store (and signs an assertion); the next ones come from memory.
            for _ in 0..<3 {
                let echo = try await gw.http.send(
                    .GET, gw.url("/v1/api/hello/../echo?q=a+b"),
                    headers: gw.bearer(token) + [("X-Gatehouse-Subject", "mallory"), ("X_Gatehouse_Email", "m@evil.test"), ("Cookie", "app=1")])
                #expect(echo.status == 200)
                let headers = echo.json?["headers"]?.objectValue ?? [:]
                #expect(headers["x-gatehouse-subject"]?.stringValue == "alice")
                #expect(headers["authorization"] == nil)
                #expect(headers["x_gatehouse_email"] == nil)
                #expect(headers["cookie"]?.stringValue == "app=1")
                #expect(headers["x-gatehouse-assertion"]?.stringValue?.split(separator: ".").count == 3)
                #expect(echo.json?["path"]?.stringValue == "/echo")
                #expect(echo.json?["query"]?.stringValue == "q=a+b")
            }
            #expect(try await fixture.relayed() == before + 3)

            // Not the relay's to answer: no session, a bad token, a path that does not normalize.
            let anonymous = try await gw.http.send(.GET, gw.url("/v1/api/echo"))
            #expect(anonymous.status == 401)
            #expect(anonymous.problemCode == "invalid_session")
            let wrong = try await gw.http.send(.GET, gw.url("/v1/api/echo"), headers: gw.bearer("not-a-token"))
            #expect(wrong.status == 401)
            let climbing = try await gw.http.send(.GET, gw.url("/v1/api/%2e%2e/%2e%2e/etc"), headers: gw.bearer(token))
            #expect(climbing.status == 400)
            #expect(try await fixture.relayed() == before + 3)

            // A logout is honoured at once: the next call is the router's 401.
            let logout = try await gw.http.send(.DELETE, gw.url("/v1/session"), headers: gw.bearer(token))
            #expect(logout.status == 200)
            let after = try await gw.http.send(.GET, gw.url("/v1/api/echo"), headers: gw.bearer(token))
            #expect(after.status == 401)
        }
    }

    @Test("a keep-alive connection's remembered session ends with a logout elsewhere, and past the session's deadlines")
    func connectionMemoFollowsTheStore() async throws {
        try await RelayFixture.with { fixture in
            let gw = fixture.gateway
            let port = fixture.port
            let call = { (token: String) in "GET /v1/api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n" }
            let before = try await fixture.relayed()

            // One connection, one token: the first call looks the session up, the next ones remember it.
            let token = fixture.token
            let connection = try RawHTTPConnection.KeptAlive(port: port)
            for _ in 0..<3 { #expect(try await connection.send(call(token)).status == 200) }
            // Past the moment activity must be recorded (a minute): not from memory, but still served.
            fixture.clock.advance(by: 90)
            #expect(try await connection.send(call(token)).status == 200)
            #expect(try await connection.send(call(token)).status == 200)
            #expect(try await fixture.relayed() == before + 5)

            // Ended on another connection (as by another instance's notification): refused on this one at once.
            let logout = try await gw.http.send(.DELETE, gw.url("/v1/session"), headers: gw.bearer(token))
            #expect(logout.status == 200)
            let after = try await connection.send(call(token))
            #expect(after.status == 401)

            // A second session on the same connection is its own: the memo is keyed by the token sent.
            let (other, _) = try await gw.nativeLogin()
            #expect(try await connection.send(call(other)).status == 200)
            #expect(try await connection.send(call(token)).status == 401)
            #expect(try await connection.send(call(other)).status == 200)
        }
    }

    @Test("fields the client's Connection lists never reach the backend")
    func dropsConnectionListedFields() async throws {
        try await RelayFixture.with { fixture in
            let token = fixture.token
            let port = fixture.port
            let result = try await RawHTTPConnection.exchange(
                port: port,
                [
                    "GET /v1/api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: keep-alive, X-Secret\r\nX-Secret: s\r\nX-Kept: k\r\nTE: trailers\r\n\r\n"
                ],
                responses: 1)
            let echo = try #require(result.responses.first)
            #expect(echo.status == 200)
            let headers = JSONValue.parse(Data(echo.body.utf8))?["headers"]?.objectValue ?? [:]
            #expect(headers["x-kept"]?.stringValue == "k")
            #expect(headers["x-secret"] == nil)
            #expect(headers["te"] == nil)
            #expect(headers["connection"] == nil)
            #expect(try await fixture.relayed() >= 1)
        }
    }

    /// An upstream that receives the provider's access token is the router's from the start (it refreshes the
    /// token before the call and after a 401): the relay judges nothing of such a request, so nothing is
    /// judged twice — neither a session it resolves nor a refusal it answers.
    @Test("an upstream with forward_access_token is the router's before anything is judged on the relay")
    func forwardedAccessTokenIsTheRouters() async throws {
        try await RelayFixture.with(configure: { $0.backend.forwardAccessToken = true }) { fixture in
            let result = try await RawHTTPConnection.exchange(
                port: fixture.port,
                [
                    "GET /v1/api/echo HTTP/1.1\r\n\(fixture.auth)\r\n",
                    "GET /v1/api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer not-a-session\r\n\r\n",
                ],
                pause: 0.1, responses: 2)
            #expect(result.responses.map(\.status) == [200, 401])
            let echo = try #require(result.responses.first)
            let headers = JSONValue.parse(Data(echo.body.utf8))?["headers"]?.objectValue ?? [:]
            #expect(headers["x-gatehouse-access-token"]?.stringValue?.isEmpty == false)
            #expect(try await fixture.relayed() == 0)
            let metrics = try await fixture.gateway.http.send(.GET, fixture.gateway.url("/metrics"))
            #expect(!metrics.text.contains("gatehouse_relayed_refusals_total 1"))
        }
    }

    /// `/v1/authz` for an app that receives the provider's access token: the relay refreshes it when due and answers
    /// itself, off the loop (it once handed such a question to the router, to be judged again there).
    @Test("/v1/authz with forward_access_token is answered by the relay, the access token in the answer")
    func forwardAuthWithAccessTokenIsTheRelays() async throws {
        try await RelayFixture.with(configure: { $0.backend.forwardAccessToken = true }) { fixture in
            let result = try await RawHTTPConnection.exchange(
                port: fixture.port,
                [
                    "GET /v1/authz HTTP/1.1\r\n\(fixture.auth)X-Forwarded-Uri: /app\r\n\r\n",
                    "GET /v1/authz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-Uri: /app\r\nAuthorization: Bearer not-a-session\r\n\r\n",
                ],
                pause: 0.1, responses: 2)
            #expect(result.responses.map(\.status) == [200, 401])
            let allowed = try #require(result.responses.first)
            let fields = allowed.head.lowercased()
            #expect(fields.contains("\r\nx-gatehouse-subject: alice\r\n"), "\(allowed.head)")
            #expect(!fields.contains("\r\nx-gatehouse-access-token: \r\n") && fields.contains("\r\nx-gatehouse-access-token: "), "\(allowed.head)")
            let metrics = try await fixture.gateway.http.send(.GET, fixture.gateway.url("/metrics"))
            #expect(metrics.text.contains("gatehouse_relayed_authz_total 2"))
        }
    }

    /// The attack: a provider hands out a subject (or email, or group) with a line break, which would add an
    /// `X-Gatehouse-Subject: admin` field of its own upstream. The relay carries the request out itself (it no
    /// longer hands it to the router to be judged again), and what the backend and nginx get is one field per
    /// name, the break turned into spaces as the router's field type turns it. (Before, the relay handed such a
    /// request to the router, which answered 502: its HTTP client refused the field.)
    @Test("an identity value with a line break is one field upstream and in the /v1/authz answer, on the relay")
    func identityValuesWithLineBreaks() async throws {
        try await RelayFixture.with { fixture in
            let token = try await fixture.session(
                for: Identity(
                    subject: "alice\r\nX-Gatehouse-Subject: admin", email: "a@example.com\u{0}", groups: ["staff\nX-Gatehouse-Groups: admin"]))
            let before = try await fixture.relayed()
            let result = try await RawHTTPConnection.exchange(
                port: fixture.port, ["GET /v1/api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n"], responses: 1)
            let echo = try #require(result.responses.first)
            #expect(echo.status == 200)
            let headers = JSONValue.parse(Data(echo.body.utf8))?["headers"]?.objectValue ?? [:]
            #expect(headers["x-gatehouse-subject"]?.stringValue == "alice  X-Gatehouse-Subject: admin")
            #expect(headers["x-gatehouse-email"]?.stringValue == "a@example.com")
            #expect(headers["x-gatehouse-groups"]?.stringValue == "staff X-Gatehouse-Groups: admin")
            #expect(try await fixture.relayed() == before + 1)

            let answer = try await RawHTTPConnection.exchange(
                port: fixture.port,
                [
                    "GET /v1/authz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-Method: GET\r\nX-Forwarded-Uri: /app\r\nAuthorization: Bearer \(token)\r\n\r\n"
                ],
                responses: 1)
            let allowed = try #require(answer.responses.first)
            #expect(allowed.status == 200)
            func values(_ name: String) -> [String] {
                allowed.head.components(separatedBy: "\r\n").dropFirst().compactMap { line in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == name else { return nil }
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
            #expect(values("x-gatehouse-subject") == ["alice  X-Gatehouse-Subject: admin"])
            #expect(values("x-gatehouse-groups") == ["staff X-Gatehouse-Groups: admin"])
            let metrics = try await fixture.gateway.http.send(.GET, fixture.gateway.url("/metrics"))
            #expect(metrics.text.contains("gatehouse_relayed_authz_total 1"))
        }
        // The router's path (a CORS request is the router's) sends the same bytes.
        try await RelayFixture.with(configure: { $0.corsAllowedOrigins = ["https://app.example"] }) { fixture in
            let token = try await fixture.session(for: Identity(subject: "alice\r\nX-Gatehouse-Subject: admin"))
            let result = try await RawHTTPConnection.exchange(
                port: fixture.port,
                ["GET /v1/api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://app.example\r\nAuthorization: Bearer \(token)\r\n\r\n"],
                responses: 1)
            let echo = try #require(result.responses.first)
            #expect(echo.status == 200)
            let headers = JSONValue.parse(Data(echo.body.utf8))?["headers"]?.objectValue ?? [:]
            #expect(headers["x-gatehouse-subject"]?.stringValue == "alice  X-Gatehouse-Subject: admin")
            #expect(try await fixture.relayed() == 0)
        }
        #expect(BackendIdentityHeaders.fieldValue("Alice Ä. Example\tx") == "Alice Ä. Example\tx")
    }

    @Test(
        "the backend's hop-by-hop fields, fixed and Connection-listed, never reach the client",
        arguments: [
            "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nX-Kept: yes",
            "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nX-Hop: secret\r\nKeep-Alive: timeout=5\r\nX-Kept: yes",
            "HTTP/1.1 200 OK\r\nX-Kept: yes\r\nProxy-Authenticate: Basic\r\nConnection: X-Hop\r\nX-Hop: secret",
        ])
    func dropsResponseHopByHopFields(head: String) async throws {
        let backend = try await ScriptedBackend.start(.answer(head))
        defer { Task { await backend.stop() } }
        try await RelayFixture.with(configure: { $0.backend.url = backend.baseURL }) { fixture in
            let token = fixture.token
            let port = fixture.port
            let call = "GET /v1/api/x HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n"
            // The second call is the relay's from memory; both must be clean.
            let result = try await RawHTTPConnection.exchange(port: port, [call, call], pause: 0.2, responses: 2)
            #expect(result.responses.map(\.status) == [200, 200])
            for response in result.responses {
                let fields = response.head.lowercased()
                #expect(fields.contains("x-kept: yes"))
                #expect(!fields.contains("x-hop"))
                #expect(!fields.contains("keep-alive"))
                #expect(!fields.contains("proxy-authenticate"))
                #expect(!fields.contains("connection:"))
                #expect(response.body == "ok")
            }
        }
    }

    @Test("a relayed request with Connection: close gets its answer, then the connection ends")
    func honoursConnectionClose() async throws {
        try await RelayFixture.with { fixture in
            let token = fixture.token
            let port = fixture.port
            let before = try await fixture.relayed()
            // Two answers wanted, one request sent: the read goes on until the gateway closes.
            let result = try await RawHTTPConnection.exchange(
                port: port, ["GET /v1/api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"],
                responses: 2, timeout: 5)
            #expect(result.responses.map(\.status) == [200])
            #expect(result.responses.first?.head.lowercased().contains("connection: close") == true)
            #expect(result.closedByPeer)
            #expect(try await fixture.relayed() == before + 1)
        }
    }

    @Test("a malformed chunk in the middle of a relayed upload: 400 invalid_request, the connection closed, no 502")
    func refusesMalformedChunks() async throws {
        try await RelayFixture.with { fixture in
            let token = fixture.token
            let port = fixture.port
            let result = try await RawHTTPConnection.exchange(
                port: port,
                [
                    "PUT /v1/api/files/x HTTP/1.1\r\nAuthorization: Bearer \(token)\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
                    "zz\r\nnot a chunk\r\n",
                ],
                pause: 0.2, responses: 1)
            #expect(result.responses.first?.status == 400)
            #expect(result.responses.first?.body.contains("\"code\":\"invalid_request\"") == true)
            #expect(result.closedByPeer || result.responses.first?.head.lowercased().contains("connection: close") == true)
        }
    }
}
