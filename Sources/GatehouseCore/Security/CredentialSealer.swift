import Crypto
public import Foundation

/// Seals and opens secrets at rest with AES-256-GCM under a key id, so keys can rotate without
/// logging everyone out: the first key seals, every key opens.
///
/// Sealed layout: `0x01 | kid length (1 byte) | kid (UTF-8) | nonce | ciphertext | tag`.
public struct CredentialSealer: Sendable {
    public struct Key: Sendable {
        public var id: String
        public var bytes: Data
        public init(id: String, bytes: Data) {
            self.id = id
            self.bytes = bytes
        }
    }

    public enum SealError: Error, Equatable {
        case unknownKey(String)
        case malformed
        case invalidKeyLength(String)
        /// Key ids are 1–255 UTF-8 bytes (their length is stored in one byte).
        case invalidKeyID(String)
    }

    private let keys: [(id: String, key: SymmetricKey)]

    /// - Parameter keys: 32-byte keys; the first one seals.
    public init(keys: [Key]) throws {
        precondition(!keys.isEmpty, "at least one sealing key")
        self.keys = try keys.map { key in
            guard (1...255).contains(key.id.utf8.count) else { throw SealError.invalidKeyID(key.id) }
            guard key.bytes.count == 32 else { throw SealError.invalidKeyLength(key.id) }
            return (key.id, SymmetricKey(data: key.bytes))
        }
    }

    /// The id of the key that seals.
    public var currentKeyID: String { keys[0].id }

    public func seal(_ plaintext: Data) throws -> Data {
        let (id, key) = keys[0]
        let box = try AES.GCM.seal(plaintext, using: key)
        guard let combined = box.combined else { throw SealError.malformed }
        let kid = Data(id.utf8)
        var out = Data([1, UInt8(kid.count)])
        out.append(kid)
        out.append(combined)
        return out
    }

    public func open(_ sealed: Data) throws -> Data {
        let bytes = [UInt8](sealed)
        guard bytes.count > 2, bytes[0] == 1 else { throw SealError.malformed }
        let kidLength = Int(bytes[1])
        guard bytes.count > 2 + kidLength else { throw SealError.malformed }
        let kid = String(decoding: bytes[2..<(2 + kidLength)], as: UTF8.self)
        guard let key = keys.first(where: { $0.id == kid })?.key else { throw SealError.unknownKey(kid) }
        let box = try AES.GCM.SealedBox(combined: Data(bytes[(2 + kidLength)...]))
        return try AES.GCM.open(box, using: key)
    }

    /// Seals a Codable value as JSON.
    public func seal<T: Encodable>(json value: T) throws -> Data {
        try seal(JSONEncoder().encode(value))
    }

    public func open<T: Decodable>(json type: T.Type, from sealed: Data) throws -> T {
        try JSONDecoder().decode(type, from: open(sealed))
    }
}
