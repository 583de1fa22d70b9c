import ArgumentParser

/// A failure of the command-line client (`login`, `whoami`, `api`, `logout`): reported as one
/// `error: <message>` line on stderr, then the command exits with status 1.
struct ClientFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for a person; a gateway problem reads `<code>: <detail>`.
    var message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }

    /// Runs a client command's body: a ``ClientFailure`` (or any other error) becomes `error: …` on stderr and
    /// exit status 1; an `ExitCode` passes through untouched.
    static func reporting(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let exit as ExitCode {
            throw exit
        } catch let failure as ClientFailure {
            ClientOutput.error("error: \(failure.message)")
            throw ExitCode(1)
        } catch {
            ClientOutput.error("error: \(error)")
            throw ExitCode(1)
        }
    }
}
