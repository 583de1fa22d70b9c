import ArgumentParser
import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseServer

/// `gatehouse sessions list|revoke`: the sessions of the configured store, for an operator (who is signed in
/// with which provider; end a session, or every session of a user). Works on a running deployment's store:
/// a revoked session ends on every instance sharing it (within the session cache's bound, 1 s).
struct SessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions", abstract: "List or revoke sessions in the configured store.",
        subcommands: [List.self, Revoke.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List sessions, newest first (never a token).")
        @OptionGroup var options: ConfigOptions
        @Option(help: "Only this provider's sessions.") var provider: String?
        // Subjects and session ids may start with '-' (ids are base64url): take the next word whatever it is.
        @Option(parsing: .unconditional, help: "Only this subject's sessions.") var subject: String?
        @Option(help: "At most this many.") var limit = 100

        func run() async throws {
            let sessions = try await SessionsCommand.withListing(options, whenMissing: []) {
                try await $0.sessions(provider: provider, subject: subject, limit: limit)
            }
            print(["id", "provider", "subject", "created_at", "last_seen_at", "expires_at"].joined(separator: "\t"))
            let iso = ISO8601DateFormatter()
            for s in sessions {
                print(
                    [s.id, s.provider, s.subject, iso.string(from: s.createdAt), iso.string(from: s.lastSeenAt), iso.string(from: s.expiresAt)]
                        .joined(separator: "\t"))
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End one session (--id) or every session of a subject (--subject, optionally of one --provider).")
        @OptionGroup var options: ConfigOptions
        // Session ids are base64url and a sixty-fourth of them start with '-': take the next word whatever it is.
        @Option(parsing: .unconditional, help: "The session id (as `list` and GET /v1/session show it).") var id: String?
        @Option(parsing: .unconditional, help: "Every session of this subject.") var subject: String?
        @Option(help: "With --subject: only this provider's.") var provider: String?

        func validate() throws {
            guard (id == nil) != (subject == nil) else { throw ValidationError("give either --id or --subject") }
            if id != nil, provider != nil { throw ValidationError("--provider goes with --subject, not --id") }
        }

        func run() async throws {
            let revoked = try await SessionsCommand.withListing(options, whenMissing: 0) { store -> Int in
                if let id {
                    guard try await store.session(id: id) != nil else { return 0 }
                    try await store.deleteSession(id: id)
                    return 1
                }
                var count = 0
                // In batches: a subject may have many sessions.
                while true {
                    let batch = try await store.sessions(provider: provider, subject: subject, limit: 500)
                    if batch.isEmpty { break }
                    for session in batch { try await store.deleteSession(id: session.id) }
                    count += batch.count
                }
                return count
            }
            print("revoked \(revoked) session(s)")
            if revoked == 0 { throw ExitCode(1) }
        }
    }

    /// Runs `body` with the configured store, migrated, while its connection pool runs. A SQLite store that does
    /// not exist yet holds no session: `whenMissing` is the answer, and nothing is created (these commands only
    /// read or delete; `serve` and `migrate` create the store).
    static func withListing<T: Sendable>(
        _ options: ConfigOptions, whenMissing: T, _ body: @escaping @Sendable (any SessionListing) async throws -> T
    ) async throws -> T {
        let configuration = try options.load()
        guard configuration.store.kind != .memory else {
            printError("the configured store is 'memory': its sessions live inside the running gateway only")
            throw ExitCode(1)
        }
        if configuration.store.kind == .sqlite, !FileManager.default.fileExists(atPath: configuration.store.path) {
            printError("warning: no store at \(configuration.store.path) yet, so no sessions (gatehouse serve or gatehouse migrate creates it)")
            return whenMissing
        }
        let store = try GatewayLauncher.makeStore(configuration)
        guard let listing = store as? any SessionListing else { throw ExitCode(1) }
        return try await GatewayLauncher.withRunningStore(store) {
            try await store.migrate()
            return try await body(listing)
        }
    }
}
