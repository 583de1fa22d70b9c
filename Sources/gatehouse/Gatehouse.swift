import ArgumentParser

/// `gatehouse`: the authentication gateway's command line.
@main
struct Gatehouse: AsyncParsableCommand {
    /// The release this binary is (`gatehouse --version`).
    static let version = "0.9.0"

    static let configuration = CommandConfiguration(
        commandName: "gatehouse",
        abstract: "An authentication gateway: one session for thin clients, many identity providers behind it.",
        version: "gatehouse \(version)",
        subcommands: [
            ServeCommand.self, CheckCommand.self, ProvidersCommand.self, MigrateCommand.self, KeysCommand.self, SessionsCommand.self,
            DemoCommand.self,
            LoginCommand.self, WhoamiCommand.self, APICommand.self, LogoutCommand.self,
        ]
    )
}
