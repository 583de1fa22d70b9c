/// The shape of a synthetic session row, shared by both seeders.
enum SeedRow {
    /// The provider id written into seeded rows.
    static let provider = "bench"
    /// Bytes of the sealed-credential blob: a sealed OAuth credential (kid, nonce, JSON, tag) is about this size.
    static let sealedCredentialBytes = 400
    /// Seeded sessions end this long after seeding.
    static let lifetimeSeconds = 365.0 * 86400
    /// Rows per insert statement / transaction.
    static let batchSize = 50_000
}
