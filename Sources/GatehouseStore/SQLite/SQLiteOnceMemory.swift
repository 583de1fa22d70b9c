/// What one process knows of the once log (``SQLiteOnceLog``): every record it has read or written that may
/// still be live, by digest, and how far it has read the log.
///
/// A plain value: the log changes it only after a write transaction commits, so a failed write leaves it as
/// it was. Forgetting is cheap: records are grouped by the whole second their expiry falls in, and a prune
/// drops whole seconds from the oldest on, never scanning the live records.
struct SQLiteOnceMemory {
    /// The highest log id read or written; every row up to it is known.
    private(set) var lastID: Int64 = 0
    /// Each known record's expiry (seconds since 1970), the latest when a key was recorded more than once.
    private var expiries: [SQLiteOnceDigest: Double] = [:]
    /// The digests by the second their expiry falls in. A digest whose expiry moved later is in several; the
    /// older entries are skipped when pruned.
    private var buckets: [Int64: [SQLiteOnceDigest]] = [:]
    /// The seconds of `buckets`, ascending.
    private var bucketSeconds: [Int64] = []
    /// Records that expired before this instant may be forgotten: the last sweep's `now` (the same instant
    /// the other stores forget at).
    private var horizon = -Double.infinity

    /// How many records are known.
    var count: Int { expiries.count }

    /// Whether `digest` is recorded and not yet expired at `now` (the expiry instant itself still counts, as
    /// in the other stores).
    func isLive(_ digest: SQLiteOnceDigest, at now: Double) -> Bool {
        guard let expiry = expiries[digest] else { return false }
        return expiry >= now
    }

    /// Knows `digest` until `until`, or keeps the later expiry it already knows.
    mutating func remember(_ digest: SQLiteOnceDigest, until: Double) {
        if let known = expiries[digest], known >= until { return }
        expiries[digest] = until
        let second = Self.second(of: until)
        if buckets[second] == nil {
            // Expiries mostly grow with time: a new second is almost always the last.
            if let last = bucketSeconds.last, second < last {
                bucketSeconds.insert(second, at: insertionIndex(of: second))
            } else {
                bucketSeconds.append(second)
            }
        }
        buckets[second, default: []].append(digest)
    }

    /// Knows the records of `rows` (digest → expiry), read or appended up to log id `id`.
    mutating func learn(_ rows: [SQLiteOnceDigest: Double], upTo id: Int64) {
        for (digest, until) in rows { remember(digest, until: until) }
        lastID = max(lastID, id)
    }

    /// Allows forgetting the records expired before `now` (see ``prune(seconds:)``).
    mutating func expire(before now: Double) {
        horizon = max(horizon, now)
    }

    /// Forgets the records of at most `seconds` whole seconds that lie before the horizon, oldest first: the
    /// work of one sweep spread over the following writes.
    mutating func prune(seconds: Int) {
        for _ in 0..<seconds {
            guard let first = bucketSeconds.first, Double(first) + 1 <= horizon else { return }
            bucketSeconds.removeFirst()
            for digest in buckets.removeValue(forKey: first) ?? [] {
                // Recorded again with a later expiry: it lives on in a later second.
                if let expiry = expiries[digest], expiry < horizon { expiries[digest] = nil }
            }
        }
    }

    /// The whole second `time` falls in; out-of-range times (never written by the gateway) are clamped.
    private static func second(of time: Double) -> Int64 {
        guard time.isFinite, abs(time) < 9e15 else { return time > 0 ? Int64.max : Int64.min }
        return Int64(time.rounded(.down))
    }

    /// Where `second` goes in the ascending `bucketSeconds`.
    private func insertionIndex(of second: Int64) -> Int {
        var low = 0
        var high = bucketSeconds.count
        while low < high {
            let middle = (low + high) / 2
            if bucketSeconds[middle] < second { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
