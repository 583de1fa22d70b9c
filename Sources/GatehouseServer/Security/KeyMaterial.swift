import Crypto
import Foundation
public import GatehouseCore

/// Loads the sealing and signing keys, or creates them under the data directory on first start.
///
/// Sealing key files hold 32 random bytes in base64; signing key files hold an ES256 (P-256) private
/// key in PEM. The first key of each list seals or signs; all of them open or verify.
public struct KeyMaterial: Sendable {
    public var sealing: [CredentialSealer.Key]
    public var signing: [(id: String, pem: String)]

    public enum KeyError: Error, CustomStringConvertible {
        case unreadable(String)
        case invalidSealingKey(String)

        public var description: String {
            switch self {
            case .unreadable(let path): "cannot read key file '\(path)'"
            case .invalidSealingKey(let path): "key file '\(path)' must hold 32 bytes in base64"
            }
        }
    }

    /// - Parameters:
    ///   - sealing: `(id, path)` of each sealing key; empty means generated under `dataDirectory`.
    ///   - signing: `(id, path)` of each signing key; empty means generated under `dataDirectory`.
    public static func load(sealing: [(id: String, path: String)], signing: [(id: String, path: String)], dataDirectory: String) throws -> KeyMaterial
    {
        let sealingRefs = sealing.isEmpty ? [("k1", try generated(sealingKeyIn: dataDirectory))] : sealing
        let signingRefs = signing.isEmpty ? [("s1", try generated(signingKeyIn: dataDirectory))] : signing
        let sealingKeys = try sealingRefs.map { id, path in
            guard let bytes = sealingKeyBytes(try read(path)) else { throw KeyError.invalidSealingKey(path) }
            return CredentialSealer.Key(id: id, bytes: bytes)
        }
        let signingKeys = try signingRefs.map { id, path in (id: id, pem: try read(path)) }
        return KeyMaterial(sealing: sealingKeys, signing: signingKeys)
    }

    /// A new sealing key, base64.
    public static func newSealingKey() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// A new ES256 signing key, PEM.
    public static func newSigningKey() -> String {
        P256.Signing.PrivateKey().pemRepresentation
    }

    private static func generated(sealingKeyIn directory: String) throws -> String {
        try ensure(file: (directory as NSString).appendingPathComponent("sealing-k1.key"), content: newSealingKey())
    }

    private static func generated(signingKeyIn directory: String) throws -> String {
        try ensure(file: (directory as NSString).appendingPathComponent("signing-s1.pem"), content: newSigningKey())
    }

    /// Creates a key file readable by the owner only, unless it exists.
    private static func ensure(file: String, content: String) throws -> String {
        let manager = FileManager.default
        if !manager.fileExists(atPath: file) {
            try manager.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard manager.createFile(atPath: file, contents: Data((content + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
                throw KeyError.unreadable(file)
            }
        }
        return file
    }

    /// A sealing key file's 32 bytes (base64, surrounding whitespace ignored), or nil.
    static func sealingKeyBytes(_ text: String) -> Data? {
        Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap { $0.count == 32 ? $0 : nil }
    }

    static func read(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw KeyError.unreadable(path) }
        return String(decoding: data, as: UTF8.self)
    }
}
