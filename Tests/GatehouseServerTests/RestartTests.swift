import Foundation
import GatehouseCore
import GatehouseDemo
import GatehouseServer
import GatehouseStore
import NIOHTTP1
import Testing

/// Sessions in the SQLite store survive a gateway restart.
@Suite("Restart")
struct RestartTests {
    @Test("a session created before a restart works after it (SQLite)")
    func sessionSurvivesRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-restart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("gatehouse.sqlite3").path
        try await StandIns.with { standIns in
            let token = try await GatewayInstance.with(standIns, store: try SQLiteSessionStore(path: path)) { gw in
                try await gw.nativeLogin().token
            }
            try await GatewayInstance.with(standIns, store: try SQLiteSessionStore(path: path)) { gw in
                let session = try await gw.http.send(.GET, gw.url("/v1/session"), headers: gw.bearer(token))
                #expect(session.status == 200, "\(session.text)")
                #expect(session.json?["subject"]?.stringValue == "alice")
                let grades = try await gw.http.send(.GET, gw.url("/v1/proxy/demo/grades/@me"), headers: gw.bearer(token))
                #expect(grades.status == 200)
            }
        }
    }
}
