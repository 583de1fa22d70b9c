import Foundation
import GatehouseConfiguration
import NIOCore
import NIOEmbedded
import Testing

@testable import GatehouseServer

/// A pool belongs to an upstream's name and address, not to the table it came from: a SIGHUP that keeps an
/// upstream keeps its warm connections; one that moves it, or renames it, gets a new pool.
struct UpstreamPoolsTests {
    static func table(backend: String, billing: String, name: String = "billing") -> UpstreamTable {
        var settings = ServerSettings(publicURL: "http://gw")
        settings.backend.url = backend
        var upstream = ServerSettings.BackendSettings()
        upstream.url = billing
        settings.upstreams = [.init(name: name, prefix: "/billing", backend: upstream)]
        return UpstreamTable(settings: settings)
    }

    @Test func anUnchangedUpstreamKeepsItsPoolAcrossTablesAndAMovedOneGetsANewOne() throws {
        let loop = EmbeddedEventLoop()
        defer { try? loop.syncShutdownGracefully() }
        let pools = UpstreamPools()
        let before = Self.table(backend: "http://127.0.0.1:9000/base", billing: "http://127.0.0.1:9001")
        let after = Self.table(backend: "http://127.0.0.1:9000/other", billing: "http://127.0.0.1:9002")
        let renamed = Self.table(backend: "http://127.0.0.1:9000", billing: "http://127.0.0.1:9001", name: "invoices")
        let backendPool = try #require(pools.pool(for: before.fallback, on: loop))
        let billingPool = try #require(pools.pool(for: before.all[1], on: loop))
        // Same name and address (a new base path is the head's business, not the connection's): the same pool.
        #expect(try #require(pools.pool(for: after.fallback, on: loop)).value === backendPool.value)
        // Moved: a new pool, and the old one is not handed out for the new address.
        let moved = try #require(pools.pool(for: after.all[1], on: loop))
        #expect(moved.value !== billingPool.value)
        // Renamed, at the old address: its own pool (each upstream has its own keep-alive pools).
        #expect(try #require(pools.pool(for: renamed.all[1], on: loop)).value !== billingPool.value)
        #expect(try #require(pools.pool(for: before.all[1], on: loop)).value === billingPool.value)
    }

    @Test func anUpstreamTheRelayDoesNotReachHasNoPool() {
        let loop = EmbeddedEventLoop()
        defer { try? loop.syncShutdownGracefully() }
        let table = Self.table(backend: "http://127.0.0.1:9000", billing: "https://billing.internal")
        #expect(UpstreamPools().pool(for: table.all[1], on: loop) == nil)
    }
}
