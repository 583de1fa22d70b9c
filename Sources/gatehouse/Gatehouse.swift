import ArgumentParser

/// `gatehouse`: the authentication gateway's command line.
@main
struct Gatehouse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse",
        abstract: "An authentication gateway: one session for thin clients, many identity providers behind it.",
        subcommands: [ServeCommand.self, CheckCommand.self, ProvidersCommand.self, MigrateCommand.self, KeysCommand.self, DemoCommand.self]
    )
}
