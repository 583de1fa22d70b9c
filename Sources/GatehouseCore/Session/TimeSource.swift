public import Foundation

/// The clock, injected so tests can move time without sleeping.
public struct TimeSource: Sendable {
    public var now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The wall clock.
    public static let system = TimeSource { Date() }
}
