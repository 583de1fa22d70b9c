import ArgumentParser
import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseServer

/// `--config PATH`, shared by the commands that read `gatehouse.yaml`.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: "The gatehouse.yaml to read (default: ./gatehouse.yaml when it exists, else built-in defaults).")
    var config: String?

    /// Loads the configuration, printing every `file:line: message` and exiting 1 when it is invalid: the problems of
    /// `gatehouse.yaml` with those of the key files it names, as `gatehouse check` prints them.
    func load() throws -> GatewayConfiguration {
        let (read, problems) = GatewayConfiguration.read(path: config)
        if let read, problems.isEmpty { return read }
        // A misspelt GATEHOUSE_* name may be why a value is wrong: say so first.
        let directory = ((config ?? "") as NSString).deletingLastPathComponent
        let base = directory.isEmpty ? FileManager.default.currentDirectoryPath : directory
        for line in environmentWarnings(read ?? GatewayConfiguration.defaults(baseDirectory: base)) {
            printError("warning: \(line)")
        }
        let keyFiles = read.map { KeyMaterial.problems(in: $0.keys) } ?? []
        for problem in Self.merged(problems, with: keyFiles) { printError(problem.description) }
        throw ExitCode(1)
    }

    /// The problems of `gatehouse.yaml` and those found in the files and directories it names, in line order; one of
    /// the latter is left out when its line already has a problem of its own (a key entry without its `file`).
    static func merged(_ problems: [ConfigError], with found: [ConfigError]) -> [ConfigError] {
        let kept = found.filter { found in !problems.contains { $0.file == found.file && $0.line == found.line } }
        return (problems + kept).enumerated()
            .sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
            .map(\.element)
    }

    /// The warnings for `GATEHOUSE_*` variables that set no key, for a configuration as loaded (or as far as it
    /// could be); names only, never values.
    func environmentWarnings(_ configuration: GatewayConfiguration) -> [String] {
        let file =
            configuration.file ?? config
            ?? (FileManager.default.fileExists(atPath: GatewayConfiguration.defaultFile) ? GatewayConfiguration.defaultFile : nil)
        return GatewayConfiguration.environmentWarnings(file: file, providersDirectory: configuration.providersDirectory)
    }
}

/// Writes a line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
