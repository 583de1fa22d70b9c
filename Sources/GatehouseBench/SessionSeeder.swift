/// Fills a store's `sessions` table with synthetic rows straight through SQL, far faster than
/// `insertSession` one by one, and picks existing token hashes to look up.
///
/// Rows have the sizes of real ones: a 64-hex `token_hash`, an identity JSON of about 150 bytes, a
/// 400-byte sealed-credential blob, and an `expires_at` a year ahead (so no sweep removes them).
protocol SessionSeeder: Sendable {
    /// How many sessions the table holds.
    func storedSessions() async throws -> Int
    /// Inserts rows until the table holds at least `target`; returns how many were inserted.
    func seed(upTo target: Int) async throws -> Int
    /// Up to `count` distinct token hashes of stored sessions, picked at random.
    func sampleTokenHashes(count: Int) async throws -> [String]
    /// The bytes the sessions table and its indexes take on disk.
    func storageBytes() async throws -> Int
}
