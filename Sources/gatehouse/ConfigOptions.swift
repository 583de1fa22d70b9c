import ArgumentParser
import Foundation
import GatehouseConfiguration

/// `--config PATH`, shared by the commands that read `gatehouse.yaml`.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: "The gatehouse.yaml to read (default: ./gatehouse.yaml when it exists, else built-in defaults).")
    var config: String?

    /// Loads the configuration, printing every `file:line: message` and exiting 1 when it is invalid.
    func load() throws -> GatewayConfiguration {
        do {
            return try GatewayConfiguration.load(path: config)
        } catch let errors as ConfigurationErrors {
            // A misspelt GATEHOUSE_* name may be why a value is wrong: say so first.
            let directory = ((config ?? "") as NSString).deletingLastPathComponent
            let base = directory.isEmpty ? FileManager.default.currentDirectoryPath : directory
            for line in environmentWarnings(GatewayConfiguration.defaults(baseDirectory: base)) {
                printError("warning: \(line)")
            }
            for line in errors.lines { printError(line) }
            throw ExitCode(1)
        }
    }

    /// The warnings for `GATEHOUSE_*` variables that set no key, for a configuration as loaded (or as far as it
    /// could be); names only, never values.
    func environmentWarnings(_ configuration: GatewayConfiguration) -> [String] {
        let file = configuration.file ?? config ?? (FileManager.default.fileExists(atPath: GatewayConfiguration.defaultFile) ? GatewayConfiguration.defaultFile : nil)
        return GatewayConfiguration.environmentWarnings(file: file, providersDirectory: configuration.providersDirectory)
    }
}

/// Writes a line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
