import Foundation
import GatehouseConfiguration
import GatehouseCore
import Testing

/// Shared helpers of the configuration tests.
enum Fixtures {
    static let kinds: [String: any ProviderKind.Type] = ["oauth2": TestOAuth2Kind.self, "static": TestStaticKind.self]

    static let context = ProviderContext(transport: NoTransport(), publicURL: "http://127.0.0.1:8080")

    /// The package root, found from this file's path.
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// Parses `gatehouse.yaml` text as the file `/tmp/gatehouse.yaml` and returns its problems as `file:line: message`
    /// (an environment variable's problem at line 0); empty when it parses.
    static func parseErrors(_ yaml: String, environment: [String: String] = [:]) -> [String] {
        do {
            _ = try GatewayConfiguration.parse(yaml, file: "/tmp/gatehouse.yaml", environment: environment)
            return []
        } catch let errors as ConfigurationErrors {
            return errors.errors.map { "\($0.file):\($0.line): \($0.message)" }
        } catch {
            return ["\(error)"]
        }
    }

    /// Loads `gatehouse.yaml` text from a fresh directory and returns the problems as printed.
    static func gatewayErrors(
        _ yaml: String, environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (file: String, lines: [String]) {
        let directory = try TemporaryDirectory()
        let file = try directory.write("gatehouse.yaml", yaml)
        do {
            _ = try GatewayConfiguration.load(path: file, environment: environment)
            Issue.record("expected an error", sourceLocation: sourceLocation)
            return (file, [])
        } catch let error as ConfigurationErrors {
            return (file, error.lines)
        }
    }

    /// Loads provider files from a fresh directory and returns the problems as printed.
    static func providerErrors(
        _ files: [String: String], environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (directory: String, lines: [String]) {
        let directory = try TemporaryDirectory()
        for (name, text) in files { try directory.write(name, text) }
        do {
            _ = try ProviderCatalog.load(directory: directory.path, kinds: kinds, context: context, environment: environment)
            Issue.record("expected an error", sourceLocation: sourceLocation)
            return (directory.path, [])
        } catch let error as ConfigurationErrors {
            return (directory.path, error.lines)
        }
    }
}
