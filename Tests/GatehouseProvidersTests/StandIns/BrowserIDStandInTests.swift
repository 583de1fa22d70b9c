import Foundation
import GatehouseCore
import GatehouseDemo
import GatehouseTestSupport
import Testing

@testable import GatehouseProviders

/// A GET-only transport to the loopback stand-in, through the `curl` binary (this target has no HTTP
/// client: URLSession needs FoundationNetworking).
private struct CurlTransport: HTTPTransport {
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("browserid-curl-\(UUID().uuidString)")
        let bodyFile = base.appendingPathExtension("body")
        let statusFile = base.appendingPathExtension("status")
        let errorsFile = base.appendingPathExtension("errors")
        defer { for file in [bodyFile, statusFile, errorsFile] { try? FileManager.default.removeItem(at: file) } }
        let exitCode = try await ChildProcess.run(
            "/usr/bin/curl", ["-sS", "--max-time", "10", "-o", bodyFile.path, "-w", "%{http_code}", request.url], stdout: statusFile,
            stderr: errorsFile)
        guard exitCode == 0 else { throw TransportError("curl exited with \(exitCode)") }
        let status = Int((try? String(contentsOf: statusFile, encoding: .utf8)) ?? "") ?? 0
        return TransportResponse(status: status, body: (try? Data(contentsOf: bodyFile)) ?? Data())
    }
}

@Suite struct BrowserIDStandInTests {
    @Test("the stand-in IdP serves its support document and mints assertions the adapter verifies (fetched and pinned)")
    func standIn() async throws {
        let idp = StandInBrowserIDIdP(
            domain: "browserid.demo.test", issuerKey: BrowserIDFixture.signer(.dsa128(seed: "browserid.demo.test")),
            userKey: BrowserIDFixture.signer(.dsa128(seed: "demo-user")))
        let port = try await idp.start()
        defer { Task { await idp.stop() } }
        #expect(port > 0)
        let audience = "http://127.0.0.1:8080"

        // Fetched: the adapter's support-document URL is pointed at the loopback stand-in.
        let configuration = BrowserIDProvider.Configuration(audiences: [BrowserIDAudience(configured: audience)!])
        let context = ProviderContext(transport: CurlTransport(), publicURL: audience)
        let fetched = try BrowserIDProvider(
            descriptor: ProviderDescriptor(id: "demo-browserid", kind: "browserid"), configuration: configuration, context: context,
            supportDocumentURL: { _ in idp.supportDocumentURL })
        let result = try await fetched.verifyAssertion(idp.mintAssertion(email: "alice@browserid.demo.test", audience: audience), audience: audience)
        #expect(result.identity.subject == "alice@browserid.demo.test")

        // Pinned: no network at all.
        let pinned = try BrowserIDProvider(
            descriptor: ProviderDescriptor(id: "demo-browserid", kind: "browserid"),
            configuration: .init(
                audiences: configuration.audiences, pinnedSupportDocuments: ["browserid.demo.test": idp.supportDocument], fetchSupportDocuments: false
            ),
            context: ProviderContext(transport: FakeTransport(), publicURL: audience))
        #expect(await BrowserIDFixture.refusal(pinned, idp.mintAssertion(email: "bob@browserid.demo.test", audience: audience)) == nil)
        #expect(
            await BrowserIDFixture.refusal(pinned, idp.mintAssertion(email: "bob@browserid.demo.test", audience: "http://127.0.0.1:8081"))
                == "audience_mismatch")
        #expect(await BrowserIDFixture.refusal(pinned, idp.mintAssertion(email: "bob@elsewhere.test", audience: audience)) == "untrusted_issuer")
        let old = idp.mintAssertion(email: "bob@browserid.demo.test", audience: audience, lifetime: 60, now: Date().addingTimeInterval(-600))
        #expect(await BrowserIDFixture.refusal(pinned, old) == "assertion_expired")

        // The HTTP helper mints too.
        let response = try await CurlTransport().send(
            TransportRequest(url: "\(idp.baseURL)/assertion?email=carol@browserid.demo.test&audience=\(audience)"))
        #expect(response.status == 200)
        let minted = try #require(response.json?["assertion"]?.stringValue)
        #expect(await BrowserIDFixture.refusal(pinned, minted) == nil)
    }
}
