import ArgumentParser
import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseServer

/// `gatehouse migrate`: creates or upgrades the configured store's schema.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Create or upgrade the session store's schema.")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let configuration = try options.load()
        let directories = StateDirectories.problems(in: configuration, generatingKeys: false)
        guard directories.isEmpty else {
            for problem in directories { printError(problem.description) }
            throw ExitCode(1)
        }
        let store = try GatewayLauncher.makeStore(configuration)
        try await GatewayLauncher.withRunningStore(store) { try await store.migrate() }
        print(Self.summary(configuration.store))
    }

    /// One line for a person: which store now has the current schema (a PostgreSQL URL without its credentials).
    static func summary(_ store: GatewayConfiguration.Store) -> String {
        switch store.kind {
        case .sqlite:
            return "store migrated: SQLite database \(store.path)"
        case .memory:
            return "store migrated: in-memory store (nothing is kept after the process ends)"
        case .postgres:
            let components = store.url.flatMap(URLComponents.init(string:))
            let host = components?.host ?? "?"
            let port = components?.port.map { ":\($0)" } ?? ""
            let database = components?.path.isEmpty == false ? components!.path : ""
            return "store migrated: PostgreSQL database at \(host)\(port)\(database)"
        }
    }
}
