import GRDB

/// The schema of ``SQLiteSessionStore``, one named migration per version.
///
/// Applied migrations must never change: add a new one ("v2", …) instead.
enum SQLiteMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // Dates are REAL seconds since 1970: exact to well under a microsecond, readable with `datetime(x, 'unixepoch')`.
            try db.create(table: "sessions") { t in
                t.primaryKey("id", .text)
                // UNIQUE makes SQLite index it: the per-request lookup is one index probe.
                t.column("token_hash", .text).notNull().unique()
                t.column("provider", .text).notNull()
                t.column("subject", .text).notNull()
                t.column("identity", .blob).notNull()
                t.column("sealed_credential", .blob).notNull()
                t.column("credential_version", .integer).notNull()
                t.column("created_at", .double).notNull()
                t.column("last_seen_at", .double).notNull()
                t.column("expires_at", .double).notNull()
            }
            // For the sweep (`deleteExpired`), which filters on either end.
            try db.create(index: "sessions_expires_at", on: "sessions", columns: ["expires_at"])
            try db.create(index: "sessions_last_seen_at", on: "sessions", columns: ["last_seen_at"])

            try db.create(table: "pending") { t in
                t.primaryKey {
                    t.column("key_hash", .text)
                    t.column("purpose", .text)
                }
                t.column("provider", .text).notNull()
                t.column("session_id", .text)
                t.column("payload", .blob).notNull()
                t.column("expires_at", .double).notNull()
                t.column("consumed_at", .double)
            }
            try db.create(index: "pending_expires_at", on: "pending", columns: ["expires_at"])

            // No foreign key to sessions: a lease is only a lock, and deleteSession removes it explicitly.
            try db.create(table: "refresh_leases") { t in
                t.primaryKey("session_id", .text)
                t.column("owner", .text).notNull()
                t.column("until", .double).notNull()
            }
        }
        migrator.registerMigration("v2") { db in
            // DPoP (RFC 9449): the thumbprint of the key a session is bound to, and the proofs already seen.
            try db.alter(table: "sessions") { t in t.add(column: "dpop_jkt", .text) }
            try db.create(table: "once_values") { t in
                t.primaryKey("key", .text)
                t.column("expires_at", .double).notNull()
            }
            try db.create(index: "once_values_expires_at", on: "once_values", columns: ["expires_at"])
        }
        migrator.registerMigration("v3") { db in
            // The one-time values become an append-only log (``SQLiteOnceLog``): `id` is the rowid (no
            // AUTOINCREMENT, whose counter would be one more page per write; the sweep keeps ids from going
            // down instead), `key` the key's 16-byte digest, and no other index, so an append fills the last page.
            try db.execute(sql: "CREATE TABLE once_log (id INTEGER PRIMARY KEY, key BLOB NOT NULL, expires_at REAL NOT NULL)")
            // once_values' rows live minutes at most (a proof's age limit plus skew), but an upgrade must not
            // forget them: a proof spent just before it would be accepted again. They are carried over, then the
            // table goes: an older gateway still running on the file then fails its DPoP records (closed) instead of
            // accepting proofs this one has already seen.
            let carried = try Row.fetchCursor(db, sql: "SELECT key, expires_at FROM once_values ORDER BY expires_at")
            let append = try db.makeStatement(sql: "INSERT INTO once_log (key, expires_at) VALUES (?, ?)")
            while let row = try carried.next() {
                let key: String = try row.decode(atIndex: 0)
                let expiresAt: Double = try row.decode(atIndex: 1)
                try append.execute(arguments: [SQLiteOnceDigest(key: key).blob, expiresAt])
            }
            try db.drop(table: "once_values")
        }
        migrator.registerMigration("v4") { db in
            // The provider's session (OIDC `sid`) a session came from, and the look-ups of a back-channel logout:
            // by that session, or by the subject, at one provider.
            try db.alter(table: "sessions") { t in t.add(column: "provider_sid", .text) }
            try db.create(index: "sessions_provider_sid", on: "sessions", columns: ["provider", "provider_sid"])
            try db.create(index: "sessions_provider_subject", on: "sessions", columns: ["provider", "subject"])
        }
        return migrator
    }
}
