import ArgumentParser
import Foundation
import GatehouseServer

/// `gatehouse keys generate`: writes new key files for `keys.sealing` / `keys.signing`.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keys", abstract: "Manage keys.", subcommands: [Generate.self])

    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate", abstract: "Write a new sealing key (AES-256, base64) and signing key (ES256, PEM).")

        @Option(help: "Directory to write into; created 0700 (owner only) when it does not exist.") var directory = "secrets"
        @Option(help: "Key id for both files (e.g. k2 / s2): letters, digits, '.', '_', '-'.") var id: String

        func validate() throws {
            // The id becomes part of two file names: nothing that could leave the directory or hide the file.
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
            guard (1...64).contains(id.count), id.allSatisfy(allowed.contains), !id.hasPrefix(".") else {
                throw ValidationError("--id must be 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' (got '\(id)')")
            }
        }

        func run() async throws {
            let manager = FileManager.default
            // Key files are the owner's only (0600), and so is a directory made for them; an existing one keeps its mode.
            do {
                try manager.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                printError("\(directory): cannot be created (\(Self.reason(error)))")
                throw ExitCode(1)
            }
            let sealing = (directory as NSString).appendingPathComponent("sealing-\(id).key")
            let signing = (directory as NSString).appendingPathComponent("signing-\(id).pem")
            // Refuse before writing anything, so a pair is never left half-made.
            for path in [sealing, signing] where manager.fileExists(atPath: path) {
                printError("\(path) exists; not overwriting")
                throw ExitCode(1)
            }
            for (path, content) in [(sealing, KeyMaterial.newSealingKey()), (signing, KeyMaterial.newSigningKey())] {
                guard manager.createFile(atPath: path, contents: Data((content + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
                    printError("\(path): cannot be written")
                    throw ExitCode(1)
                }
                print("wrote \(path)")
            }
            print("Add them first in keys.sealing / keys.signing of gatehouse.yaml; keep the old ones after them until old sessions expire.")
        }

        /// The system's words for a failed file operation ("Permission denied"), not Foundation's error domain and code.
        private static func reason(_ error: any Error) -> String {
            if let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey].flatMap({ $0 as? any Error }).map({ $0 as NSError }),
                underlying.domain == NSPOSIXErrorDomain
            {
                return String(cString: strerror(Int32(underlying.code)))
            }
            return error.localizedDescription
        }
    }
}
