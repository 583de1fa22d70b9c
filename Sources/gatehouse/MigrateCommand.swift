import ArgumentParser
import GatehouseConfiguration
import GatehouseCore
import GatehouseServer

/// `gatehouse migrate`: creates or upgrades the configured store's schema.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Create or upgrade the session store's schema.")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let configuration = try options.load()
        let store = try GatewayLauncher.makeStore(configuration)
        try await GatewayLauncher.withRunningStore(store) { try await store.migrate() }
        print("store migrated: \(configuration.store)")
    }
}
