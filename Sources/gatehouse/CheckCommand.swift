import ArgumentParser
import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseServer

/// `gatehouse check`: validates `gatehouse.yaml` and every provider file, as start-up does, and
/// reports every problem of every file at once.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "check", abstract: "Validate the configuration and provider files.")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        var problems: [String] = []
        // As far as it can be read: the key files and provider files it names are checked in the same run.
        let (read, configurationProblems) = GatewayConfiguration.read(path: options.config)
        let configuration = read ?? fallback()
        // Before any problem: a misspelt GATEHOUSE_* name is often why a setting did not take.
        for line in options.environmentWarnings(configuration) { printError("warning: \(line)") }
        // A key whose entry has a problem of its own is not also reported for its file, nor a directory for its setting.
        let found = KeyMaterial.problems(in: configuration.keys) + StateDirectories.problems(in: configuration)
        problems += ConfigOptions.merged(configurationProblems, with: found).map(\.description)
        var providers = 0
        var skipped: [ConfigError] = []
        var revocationWarnings: [String] = []
        do {
            let loaded = try withOfflineTransport { transport in try GatewayLauncher.loadProviderFiles(configuration, transport: transport) }
            providers = loaded.providers.count
            skipped = loaded.skipped
            // Known from the files alone; an `oidc` provider's discovery is asked by `serve` (its start-up warning).
            for case let revoking as any RevokingProvider in loaded.providers where revoking.revocationDecidedByFile {
                if let warning = revoking.revocationWarning { revocationWarnings.append(warning) }
            }
        } catch let errors as ConfigurationErrors {
            problems += errors.lines
        }
        guard problems.isEmpty else {
            for line in problems { printError(line) }
            throw ExitCode(1)
        }
        for line in skipped { printError("warning: \(line)") }
        for line in revocationWarnings { printError("warning: \(line)") }
        for warning in configuration.warnings { printError("warning: \(warning)") }
        if let warning = configuration.tls?.expiryWarning() { printError("warning: \(warning)") }
        if providers == 0, !skipped.isEmpty {
            printError(
                "warning: every provider file was skipped (optional: true, environment not set); the gateway would start, but /readyz answers 503 no_providers until one loads"
            )
        } else if providers == 0 {
            // Valid, and it would start, but never be ready: /readyz answers 503 until a provider is configured.
            printError(
                "warning: \(configuration.providersDirectory): no provider file (*.yaml); the gateway would start, but /readyz answers 503 no_providers until one is added"
            )
        }
        var source = configuration.file ?? "built-in defaults"
        if !configuration.environmentVariables.isEmpty {
            source += " and the environment (\(configuration.environmentVariables.joined(separator: ", ")))"
        }
        print("configuration OK: \(source), \(providers) provider(s) in \(configuration.providersDirectory)")
    }

    /// When `gatehouse.yaml` is invalid, the provider files are still checked: from `GATEHOUSE_PROVIDERS_DIR` or
    /// the file's `providers_dir` if that much can be read, else from the default.
    private func fallback() -> GatewayConfiguration {
        let path = options.config ?? GatewayConfiguration.defaultFile
        let directory = (path as NSString).deletingLastPathComponent
        let base = directory.isEmpty ? FileManager.default.currentDirectoryPath : directory
        var configuration = GatewayConfiguration.defaults(baseDirectory: base)
        let variable = EnvironmentSetting.variable(for: "providers_dir")
        if let value = ProcessInfo.processInfo.environment[variable], !value.trimmingCharacters(in: .whitespaces).isEmpty {
            let resolved = value.hasPrefix("/") ? value : (base as NSString).appendingPathComponent(value)
            configuration.providersDirectory = (resolved as NSString).standardizingPath
        } else if let document = try? YAMLDocument(contentsOfFile: path), case .mapping(let entries) = document.root.value,
            let entry = entries.first(where: { $0.key == "providers_dir" }), case .scalar(let value) = entry.value.value,
            !value.trimmingCharacters(in: .whitespaces).isEmpty  // "" is itself the error; not the config's own directory
        {
            let resolved = value.hasPrefix("/") ? value : (base as NSString).appendingPathComponent(value)
            configuration.providersDirectory = (resolved as NSString).standardizingPath
        }
        return configuration
    }
}
