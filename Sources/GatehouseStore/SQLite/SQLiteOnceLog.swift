import Foundation
import GRDB
import Synchronization

/// ``SQLiteSessionStore``'s one-time values (DPoP `jti`s): an append-only log in the file, `once_log`, and
/// in memory everything this process has read or written of it (``SQLiteOnceMemory``).
///
/// Why a log: the keys are random, so a keyed table (with its index) dirtied a random page per record — a
/// 4 KiB WAL frame or more each, even when many records shared one transaction. Appends to a table with
/// only its rowid fill the rightmost page: a batch of records writes one or two pages.
///
/// The guarantee across processes sharing the file: each batch is ONE `BEGIN IMMEDIATE` transaction, which
/// holds SQLite's write lock from its start. Inside it the rows other processes appended since the last read
/// are read first, then each record is answered from what is known and the new ones are appended. No other
/// process can append between that read and the commit, so checking and appending is atomic across them.
/// (A deferred transaction would read first and could then fail to upgrade, `SQLITE_BUSY_SNAPSHOT`.)
///
/// The memory learns of a batch only once it is committed: a failed write fails every record of its batch
/// and leaves nothing behind.
final class SQLiteOnceLog: Sendable {
    /// Rows other processes appended since the last read.
    private static let readSQL = "SELECT id, key, expires_at FROM once_log WHERE id > ?"
    private static let appendSQL = "INSERT INTO once_log (key, expires_at) VALUES (?, ?)"
    /// Ids deleted per sweep transaction, so the sweep never holds the write lock for long.
    static let sweepChunk: Int64 = 20_000

    /// Only ever used on the pool's writer queue (so never contended): the lock makes it `Sendable`.
    private let memory = Mutex(SQLiteOnceMemory())

    /// A log for one store (one per process, or per instance in tests).
    init() {}

    /// How many records this process knows (live ones, and expired ones not yet pruned).
    var knownCount: Int { memory.withLock { $0.count } }

    /// Answers a batch of ``OnceRecordBatcher`` on the writer's queue, and through `done` from it.
    func write(_ pool: DatabasePool, _ entries: [OnceRecordBatcher.Entry], done: @escaping @Sendable (Result<[Bool], any Error>) -> Void) {
        pool.asyncWriteWithoutTransaction { db in
            done(Result { try self.memory.withLock { memory in try Self.answer(entries, db, &memory) } })
        }
    }

    /// Reads the rows this process has not seen yet: at start-up the whole log, so a restarted process
    /// refuses the proofs it accepted before.
    func catchUp(_ pool: DatabasePool) async throws {
        try await pool.writeWithoutTransaction { db in
            try self.memory.withLock { memory in
                // One SELECT is consistent by itself; what it misses, the next batch reads under the lock.
                var known: [SQLiteOnceDigest: Double] = [:]
                var lastID = memory.lastID
                try Self.readNewRows(db, after: &lastID, into: &known)
                memory.learn(known, upTo: lastID)
            }
        }
    }

    /// Deletes the log rows expired before `now`, except the newest row, and lets the memory forget the records
    /// expired before `now` (pruned a second at a time by the following writes).
    ///
    /// The newest row stays because ids must never go down: SQLite gives a new row the highest id plus one, so
    /// deleting the highest would let the next append reuse an id another process has already read past, and
    /// that process would never see it. No index on `expires_at`: the rows are deleted by id ranges, each a
    /// short transaction of its own, so records keep being answered between them.
    func sweep(_ pool: DatabasePool, now: Date) async throws {
        let now = now.timeIntervalSince1970
        let bounds = try await pool.write { db in
            self.memory.withLock { $0.expire(before: now) }
            let row = try Row.fetchOne(db, sql: "SELECT min(id), max(id) FROM once_log")
            return try row.map { (try $0.decode(Int64?.self, atIndex: 0), try $0.decode(Int64?.self, atIndex: 1)) }
        }
        guard let bounds, let lowest = bounds.0, let highest = bounds.1 else { return }
        var start = lowest
        while start < highest {
            let (from, to) = (start, min(start + Self.sweepChunk, highest))
            try await pool.write { db in
                try db.execute(sql: "DELETE FROM once_log WHERE id >= ? AND id < ? AND expires_at < ?", arguments: [from, to, now])
            }
            start = to
        }
    }

    // MARK: The batch

    /// One batch, in one IMMEDIATE transaction: the others' new rows, then each entry in order, then the
    /// appends; the memory is updated after the commit.
    private static func answer(_ entries: [OnceRecordBatcher.Entry], _ db: Database, _ memory: inout SQLiteOnceMemory) throws -> [Bool] {
        // Rows read or appended in this transaction, not yet in `memory`.
        var fresh: [SQLiteOnceDigest: Double] = [:]
        var lastID = memory.lastID
        var answers: [Bool] = []
        answers.reserveCapacity(entries.count)
        // BEGIN and COMMIT as cached statements: `inTransaction` parses their SQL again for every batch, and
        // batches are small (often one record) when each is cheap.
        try db.cachedStatement(sql: "BEGIN IMMEDIATE").execute()
        do {
            try readNewRows(db, after: &lastID, into: &fresh)
            let append = try db.cachedStatement(sql: appendSQL)
            for entry in entries {
                let digest = SQLiteOnceDigest(key: entry.key)
                let now = entry.now.timeIntervalSince1970
                // A live record, known before or read or appended just now (a key twice in one batch: new for
                // the first, a replay for the second).
                if let expiry = fresh[digest], expiry >= now {
                    answers.append(false)
                } else if memory.isLive(digest, at: now) {
                    answers.append(false)
                } else {
                    let until = entry.until.timeIntervalSince1970
                    try append.execute(arguments: [digest.blob, until])
                    lastID = db.lastInsertedRowID
                    fresh[digest] = max(fresh[digest] ?? -.infinity, until)
                    answers.append(true)
                }
            }
            try db.cachedStatement(sql: "COMMIT").execute()
        } catch {
            // A failed statement or COMMIT may leave the transaction open (or SQLite has rolled it back already).
            if db.isInsideTransaction { try? db.execute(sql: "ROLLBACK") }
            throw error
        }
        memory.learn(fresh, upTo: lastID)
        memory.prune(seconds: 1)
        return answers
    }

    /// Reads the rows with an id above `lastID` into `known` (the latest expiry per digest) and moves `lastID`
    /// to the last of them.
    private static func readNewRows(_ db: Database, after lastID: inout Int64, into known: inout [SQLiteOnceDigest: Double]) throws {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: readSQL), arguments: [lastID])
        while let row = try rows.next() {
            let id = try row.decode(Int64.self, atIndex: 0)
            guard let digest = SQLiteOnceDigest(blob: try row.decode(Data.self, atIndex: 1)) else {
                throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "once_log row \(id): the key is not a 16-byte digest")
            }
            let until = try row.decode(Double.self, atIndex: 2)
            known[digest] = max(known[digest] ?? -.infinity, until)
            lastID = max(lastID, id)
        }
    }
}
