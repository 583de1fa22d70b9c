import ArgumentParser
import GatehouseConfiguration
import GatehouseServer

/// `gatehouse check`: validates `gatehouse.yaml` and every provider file, as start-up does.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "check", abstract: "Validate the configuration and provider files.")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let configuration = try options.load()
        let providers: Int
        do {
            providers = try withOfflineTransport { transport in try GatewayLauncher.loadProviders(configuration, transport: transport).count }
        } catch let errors as ConfigurationErrors {
            for line in errors.lines { printError(line) }
            throw ExitCode(1)
        }
        print("configuration OK: \(configuration.file ?? "built-in defaults"), \(providers) provider(s) in \(configuration.providersDirectory)")
    }
}
