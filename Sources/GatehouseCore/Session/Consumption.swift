/// The result of redeeming a single-use ``PendingRecord``.
public enum Consumption: Sendable, Equatable {
    /// First use: the record, now marked used.
    case first(PendingRecord)
    /// Used before (replay): the record as it was, so derived sessions can be revoked.
    case replayed(PendingRecord)
    /// Unknown or expired.
    case unknown
}
