import ArgumentParser
import GatehouseConfiguration
import GatehouseServer
import Logging

/// `gatehouse serve`: runs the gateway.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the gateway.")

    @OptionGroup var options: ConfigOptions

    @Option(name: .long, help: "HOST:PORT to listen on; overrides 'listen' so several instances can share one configuration.")
    var listen: String?

    func run() async throws {
        var configuration = try options.load()
        if let listen {
            do {
                try configuration.overrideListen(listen)
            } catch {
                printError("--listen: '\(listen)' is not HOST:PORT")
                throw ExitCode(1)
            }
        }
        let (host, publicURL) = (configuration.listenHost, configuration.publicURL)
        if let problem = ListenProbe.problem(host: host, port: configuration.listenPort) {
            printError(problem)
            throw ExitCode(1)
        }
        let logger = LoggingSetup.logger(configuration.logging)
        for warning in options.environmentWarnings(configuration) { logger.warning("\(warning)") }
        for warning in configuration.warnings { logger.warning("\(warning)") }
        do {
            try await GatewayLauncher.run(
                configuration, logger: logger,
                onServerRunning: { port in
                    logger.notice("gatehouse listening", metadata: ["address": "\(host):\(port)", "public_url": "\(publicURL)"])
                })
        } catch let errors as ConfigurationErrors {
            for line in errors.lines { printError(line) }
            throw ExitCode(1)
        }
    }
}
