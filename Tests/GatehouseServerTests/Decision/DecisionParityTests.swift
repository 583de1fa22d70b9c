import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// One table of `/v1/api` requests through both front ends in one process: the event-loop relay on an
/// `EmbeddedChannel` (``EmbeddedRelay``) and the router (HummingbirdTesting's `.router`), built from the same
/// gateway. Each row must get the same status and problem code from both, and a forwarded one the same target
/// and identity at the backend. The binary-level suite (`Tests/CLI/test_decision_parity.py`) stays as the
/// smoke test over real sockets, HTTP/1.0 and HTTP/2.
@Suite("Decision parity: the relay and the router, in process")
struct DecisionParityTests {
    static let rules = AccessPolicy(
        rules: [
            AccessRule(name: "public", paths: [try! PathPattern("/public/**")], allow: .anyone),
            AccessRule(
                name: "admin", paths: [try! PathPattern("/admin/**")], methods: ["GET", "HEAD"],
                allow: .conditions([AccessCondition(subjects: ["alice"])])),
            AccessRule(name: "app", paths: [try! PathPattern("/app/**")], allow: .authenticated),
        ],
        fallback: .deny)

    static let paths = [
        "/public/x", "/app/x", "/admin/x", "/other", "/app/../admin/x", "/%2e%2e/x", "/public/%252e%252e/admin", "/app/x?q=1%202",
    ]
    static let kinds = ["none", "bearer", "cookie", "cookie-csrf", "malformed"]
    static let methods: [HTTPMethod] = [.GET, .HEAD, .POST, .DELETE]

    /// What one front end did with a row.
    enum Outcome: Equatable, CustomStringConvertible {
        /// Refused: the status and (but for `HEAD`) the problem's code.
        case refused(Int, String?)
        /// Forwarded: the target at the backend and the subject it was told (`nil`: none). A `HEAD`'s echo has no
        /// body, so only that it went.
        case forwarded(target: String?, subject: String?)

        var description: String {
            switch self {
            case .refused(let status, let code): "\(status) \(code ?? "-")"
            case .forwarded(let target, let subject): "→ \(target ?? "?") as \(subject ?? "nobody")"
            }
        }
    }

    @Test("every row gets the same answer, and the backend the same target and identity, from the relay and the router")
    func oneTableThroughBothFrontEnds() async throws {
        try await RelayFixture.with(configure: { $0.access = Self.rules }) { fixture in
            let gateway = fixture.gateway
            // One call through the gateway puts the session and its assertion in memory: the relay decides every row
            // on the loop.
            let warm = try await gateway.http.send(.GET, gateway.url("/v1/api/app/warm"), headers: gateway.bearer(fixture.token))
            try #require(warm.status == 200)
            let relay = try #require(APIRelay(gateway: gateway.gateway))
            let cookieName = gateway.gateway.settings.cookie.name
            var quiet = Logger(label: "decision-parity")
            quiet.logLevel = .warning
            let app = Application(router: buildRouter(gateway: gateway.gateway), logger: quiet)
            let token = fixture.token
            let (rows, mismatches, seen) = try await app.test(.router) { client in
                var rows = 0
                var mismatches: [String] = []
                var seen: Set<String> = []
                for method in Self.methods {
                    for path in Self.paths {
                        for kind in Self.kinds {
                            let fields = Self.fields(kind, token: token, cookieName: cookieName)
                            let viaRelay = try Self.relayed(relay, method: method, path: path, fields: fields)
                            let viaRouter = try await Self.routed(client, method: method, path: path, fields: fields)
                            rows += 1
                            seen.insert(viaRelay.description.components(separatedBy: " →").first ?? "")
                            if viaRelay != viaRouter { mismatches.append("\(method) \(path) \(kind): relay \(viaRelay), router \(viaRouter)") }
                        }
                    }
                }
                return (rows, mismatches, seen)
            }
            #expect(rows >= 160)
            #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
            // The table reaches every outcome it is about.
            for outcome in [
                "401 invalid_session", "403 access_denied", "400 invalid_path", "403 csrf_required", "→ /public/x as alice", "→ /public/x as nobody",
                "→ /admin/x as alice", "→ /app/x?q=1%202 as alice",
            ] {
                #expect(seen.contains(outcome), "\(outcome) not reached: \(seen)")
            }
        }
    }

    static func fields(_ kind: String, token: String, cookieName: String) -> [(String, String)] {
        switch kind {
        case "bearer": [("Authorization", "Bearer \(token)")]
        case "cookie": [("Cookie", "theme=dark; \(cookieName)=\(token)")]
        case "cookie-csrf": [("Cookie", "\(cookieName)=\(token)"), ("X-CSRF", "1")]
        case "malformed": [("Authorization", "Basic YWxpY2U6c2VjcmV0")]
        default: []
        }
    }

    /// The row through a fresh relay: its own answer, or what it sent the backend. It must decide every row itself.
    static func relayed(_ relay: APIRelay, method: HTTPMethod, path: String, fields: [(String, String)]) throws -> Outcome {
        let embedded = try EmbeddedRelay(relay: relay, token: "")
        defer { _ = try? embedded.client.finish(acceptAlreadyClosed: true) }
        try embedded.send(embedded.head(method, "/v1/api" + path, fields, anonymous: true), .end(nil))
        #expect(try embedded.routed().isEmpty, "\(method) \(path): handed to the router")
        if let answer = try embedded.answers().first {
            return .refused(answer.status, method == .HEAD ? nil : Self.code(answer.body))
        }
        let sent = try embedded.upstreams.sent(0)
        let lines = sent.components(separatedBy: "\r\n")
        let target = lines.first?.split(separator: " ").dropFirst().first.map(String.init)
        let subject = lines.first { $0.lowercased().hasPrefix("x-gatehouse-subject:") }.map {
            String($0.dropFirst("x-gatehouse-subject:".count)).trimmingCharacters(in: .whitespaces)
        }
        return .forwarded(target: method == .HEAD ? nil : target, subject: method == .HEAD ? nil : subject)
    }

    /// The row through the router, which sends it to the echo backend.
    static func routed(_ client: some TestClientProtocol, method: HTTPMethod, path: String, fields: [(String, String)]) async throws -> Outcome {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        let response = try await client.execute(
            uri: "/v1/api" + path, method: HTTPRequest.Method(rawValue: method.rawValue)!, headers: headers, body: nil)
        let body = String(buffer: response.body)
        if response.headers[.contentType]?.hasPrefix("application/problem+json") == true || (method == .HEAD && response.status.code >= 400) {
            return .refused(Int(response.status.code), method == .HEAD ? nil : Self.code(body))
        }
        guard method != .HEAD else { return .forwarded(target: nil, subject: nil) }
        let echo = JSONValue.parse(Data(body.utf8))
        let query = echo?["query"]?.stringValue
        let target = (echo?["path"]?.stringValue ?? "?") + (query.map { $0.isEmpty ? "" : "?" + $0 } ?? "")
        return .forwarded(target: target, subject: echo?["headers"]?["x-gatehouse-subject"]?.stringValue)
    }

    static func code(_ body: String) -> String? {
        JSONValue.parse(Data(body.utf8))?["code"]?.stringValue
    }
}
