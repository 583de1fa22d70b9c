import Foundation
import GatehouseCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The client's credentials file, `$XDG_CONFIG_HOME/gatehouse/credentials.json` (default
/// `~/.config/gatehouse/credentials.json`): one ``StoredCredential`` per gateway URL.
///
/// The directory is `0700` and the file `0600`; the file is written whole into a temp file created `0600`
/// in the same directory and renamed over the old one, so it is never readable by others, not even briefly,
/// and never half written.
struct CredentialStore: Sendable {
    /// The file's layout: `{"version": 1, "gateways": {"<gateway URL>": {…}}}`.
    struct Document: Codable {
        var version = 1
        var gateways: [String: StoredCredential] = [:]
    }

    /// The `gatehouse` directory that holds `credentials.json`.
    let directory: String

    /// `credentials.json`'s path.
    var file: String { directory + "/credentials.json" }

    /// The store of this user: `$XDG_CONFIG_HOME/gatehouse` when that is set to an absolute path, else
    /// `$HOME/.config/gatehouse`.
    static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> CredentialStore {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return CredentialStore(directory: trimmed(config) + "/gatehouse")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        guard home.hasPrefix("/") else { throw ClientFailure("cannot find the home directory: set HOME or XDG_CONFIG_HOME") }
        return CredentialStore(directory: trimmed(home) + "/.config/gatehouse")
    }

    private static func trimmed(_ path: String) -> String {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path == "/" ? "" : path
    }

    /// Every stored entry (none when the file does not exist yet).
    func load() throws -> [String: StoredCredential] {
        guard FileManager.default.fileExists(atPath: file) else { return [:] }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ClientFailure("cannot read \(file): \(error.localizedDescription)")
        }
        do {
            return try Self.decoder.decode(Document.self, from: data).gateways
        } catch {
            throw ClientFailure("\(file) is not a credentials file (\(error)); remove it and sign in again")
        }
    }

    /// Reads the entries, lets `change` edit them, and writes them back.
    func update(_ change: (inout [String: StoredCredential]) throws -> Void) throws {
        var entries = try load()
        try change(&entries)
        try save(entries)
    }

    /// The entry to use for a command: the one of `gateway`, or the only one when `gateway` is nil.
    func entry(for gateway: String?) throws -> StoredCredential {
        let entries = try load()
        if let gateway {
            let key = try StoredCredential.normalizedGateway(gateway)
            guard let entry = entries[key] else {
                throw ClientFailure("not signed in to \(key): run gatehouse login --gateway \(key)")
            }
            return entry
        }
        switch entries.count {
        case 0:
            throw ClientFailure("not signed in: run gatehouse login --gateway URL")
        case 1:
            return entries.values.first!
        default:
            throw ClientFailure("signed in to several gateways, pick one with --gateway: \(entries.keys.sorted().joined(separator: ", "))")
        }
    }

    /// Writes every entry: the directory is made `0700` and the file replaced atomically by one created `0600`.
    func save(_ entries: [String: StoredCredential]) throws {
        try makeDirectory()
        let data = try Self.encoder.encode(Document(gateways: entries))
        let temporary = directory + "/.credentials.json.\(getpid()).\(RandomToken.make(byteCount: 6))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)") }
        var written = 0
        let ok = data.withUnsafeBytes { buffer -> Bool in
            guard fchmod(descriptor, 0o600) == 0 else { return false }
            while written < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += count
            }
            return fsync(descriptor) == 0
        }
        let error = failure("cannot write \(temporary)")
        close(descriptor)
        guard ok else {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, file) == 0 else {
            let error = failure("cannot replace \(file)")
            unlink(temporary)
            throw error
        }
    }

    /// Creates the directory `0700` (its missing parents too) and makes sure it is `0700`.
    private func makeDirectory() throws {
        let parent = (directory as NSString).deletingLastPathComponent
        if !parent.isEmpty, !FileManager.default.fileExists(atPath: parent) {
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw ClientFailure("cannot create \(parent): \(error.localizedDescription)")
            }
        }
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw failure("cannot create \(directory)")
        }
        guard chmod(directory, 0o700) == 0 else { throw failure("cannot restrict \(directory) to its owner") }
    }

    private func failure(_ what: String) -> ClientFailure {
        ClientFailure("\(what): \(String(cString: strerror(errno)))")
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
