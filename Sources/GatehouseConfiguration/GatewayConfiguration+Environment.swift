public import Foundation
import GatehouseCore

extension GatewayConfiguration {
    /// The warnings for `GATEHOUSE_*` variables that set no key (``EnvironmentSettings/warnings(environment:referenced:)``),
    /// leaving out the names that `gatehouse.yaml` or a provider file references as `${NAME}`: those are the
    /// files' own variables (`${GATEHOUSE_DATABASE_URL}`), not misspelt settings.
    /// - Parameters:
    ///   - file: the configuration file read, if any; a file that cannot be read references nothing.
    ///   - providersDirectory: the provider files' directory.
    ///   - environment: the process's environment.
    /// - Returns: one line per variable, without a `warning:` prefix; names only, never values.
    public static func environmentWarnings(
        file: String?, providersDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        // Most runs have no stray GATEHOUSE_* variable: then no file is read for its references.
        guard !EnvironmentSettings.warnings(environment: environment).isEmpty else { return [] }
        let files = (file.map { [$0] } ?? []) + ((try? ProviderCatalog.providerFiles(in: providersDirectory)) ?? [])
        var referenced: Set<String> = []
        for path in files {
            guard let document = try? YAMLDocument(contentsOfFile: path) else { continue }
            referenced.formUnion(EnvironmentReference.names(in: document.root))
        }
        return EnvironmentSettings.warnings(environment: environment, referenced: referenced)
    }
}
