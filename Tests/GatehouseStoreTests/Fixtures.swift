import Foundation
import GatehouseCore

/// Records with fixed times: whole seconds from a fixed instant, so both stores round-trip them exactly.
enum Fixtures {
    static let t0 = Date(timeIntervalSince1970: 1_750_000_000)

    static func at(_ seconds: TimeInterval) -> Date {
        t0.addingTimeInterval(seconds)
    }

    static func session(
        id: String = "s1", tokenHash: String? = nil, lastSeenAt: Date = t0, expiresAt: Date = at(86_400)
    ) -> SessionRecord {
        SessionRecord(
            id: id,
            tokenHash: tokenHash ?? "hash-of-\(id)",
            provider: "github",
            subject: "user-\(id)",
            identity: Data(#"{"email":"a@example.com"}"#.utf8),
            sealedCredential: Data([0x01, 0x02, 0x03]),
            credentialVersion: 1,
            createdAt: t0,
            lastSeenAt: lastSeenAt,
            expiresAt: expiresAt
        )
    }

    static func pending(
        keyHash: String = "code-hash", purpose: PendingRecord.Purpose = .handoffCode, expiresAt: Date = at(60)
    ) -> PendingRecord {
        PendingRecord(keyHash: keyHash, purpose: purpose, provider: "github", payload: Data("sealed".utf8), expiresAt: expiresAt)
    }
}
