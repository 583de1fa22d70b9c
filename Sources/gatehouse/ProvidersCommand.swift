import ArgumentParser
import GatehouseConfiguration
import GatehouseCore
import GatehouseServer

/// `gatehouse providers`: lists the configured providers and what they can do.
struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "providers", abstract: "List the configured providers.")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let configuration = try options.load()
        let providers: [any AuthProvider]
        do {
            let loaded = try withOfflineTransport { try GatewayLauncher.loadProviderFiles(configuration, transport: $0) }
            for line in loaded.skipped { printError("warning: \(line)") }
            providers = loaded.providers
        } catch let errors as ConfigurationErrors {
            for line in errors.lines { printError(line) }
            throw ExitCode(1)
        }
        if providers.isEmpty { print("no providers in \(configuration.providersDirectory)") }
        for provider in providers {
            let capabilities = provider.capabilities
            let flags = [
                ("refresh", capabilities.refresh), ("revocation", capabilities.revocation), ("expiry_known", capabilities.expiryKnown),
                ("userinfo", capabilities.userinfo), ("legacy_capture", capabilities.legacyCapture),
            ].filter(\.1).map(\.0)
            let descriptor = provider.descriptor
            print(
                "\(descriptor.id)\tkind=\(descriptor.kind)\tlogin=\(provider.loginStyle.rawValue)\tname=\"\(descriptor.name)\"\t\(flags.joined(separator: ","))"
            )
        }
    }
}
