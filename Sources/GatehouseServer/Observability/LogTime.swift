import Foundation

/// A log line's wall-clock time, to the millisecond. (Not `timespec`: a release build with the static
/// Foundation sees that C type through two modules.)
public struct LogTime: Sendable {
    /// Seconds since 1970-01-01T00:00:00Z.
    public var seconds: Int
    /// 0…999.
    public var milliseconds: Int

    public init(seconds: Int, milliseconds: Int) {
        self.seconds = seconds
        self.milliseconds = milliseconds
    }

    /// Now, from the real-time clock.
    public static func now() -> LogTime {
        let now = Date().timeIntervalSince1970
        let seconds = now.rounded(.down)
        return LogTime(seconds: Int(seconds), milliseconds: min(999, Int((now - seconds) * 1000)))
    }
}
