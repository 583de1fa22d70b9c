/// The schema of ``PostgresSessionStore``, one numbered migration per version.
///
/// Applied migrations must never change: append a new one instead. Dates are `double precision`
/// seconds since 1970, as in the SQLite store.
enum PostgresMigrations {
    /// The advisory lock key that serializes migrations across instances ("gatehouse" in ASCII, truncated).
    static let lockKey: Int64 = 0x6761_7465_686f_7573

    static let all: [(version: Int, statements: [String])] = [
        (
            1,
            [
                """
                CREATE TABLE sessions (
                    id text PRIMARY KEY,
                    token_hash text NOT NULL UNIQUE,
                    provider text NOT NULL,
                    subject text NOT NULL,
                    identity bytea NOT NULL,
                    sealed_credential bytea NOT NULL,
                    credential_version bigint NOT NULL,
                    created_at double precision NOT NULL,
                    last_seen_at double precision NOT NULL,
                    expires_at double precision NOT NULL
                )
                """,
                "CREATE INDEX sessions_expires_at ON sessions (expires_at)",
                "CREATE INDEX sessions_last_seen_at ON sessions (last_seen_at)",
                """
                CREATE TABLE pending (
                    key_hash text NOT NULL,
                    purpose text NOT NULL,
                    provider text NOT NULL,
                    session_id text,
                    payload bytea NOT NULL,
                    expires_at double precision NOT NULL,
                    consumed_at double precision,
                    PRIMARY KEY (key_hash, purpose)
                )
                """,
                "CREATE INDEX pending_expires_at ON pending (expires_at)",
                """
                CREATE TABLE refresh_leases (
                    session_id text PRIMARY KEY,
                    owner text NOT NULL,
                    until double precision NOT NULL
                )
                """,
            ]
        ),
        // DPoP (RFC 9449): the thumbprint of the key a session is bound to, and the proofs already seen.
        (
            2,
            [
                "ALTER TABLE sessions ADD COLUMN dpop_jkt text",
                "CREATE TABLE once_values (key text PRIMARY KEY, expires_at double precision NOT NULL)",
                "CREATE INDEX once_values_expires_at ON once_values (expires_at)",
            ]
        ),
        // Back-channel logout: the provider's session (OIDC `sid`) a session came from, found by it or by subject.
        (
            3,
            [
                "ALTER TABLE sessions ADD COLUMN provider_sid text",
                "CREATE INDEX sessions_provider_sid ON sessions (provider, provider_sid)",
                "CREATE INDEX sessions_provider_subject ON sessions (provider, subject)",
            ]
        ),
    ]
}
