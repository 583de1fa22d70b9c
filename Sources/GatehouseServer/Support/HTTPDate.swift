import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `Date` field of the router's answers (RFC 9110 §5.6.7, IMF-fixdate), made once per second.
final class HTTPDate: Sendable {
    private let cached = Mutex<(second: Int, text: String)>((-1, ""))

    init() {}

    /// Now, as an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    var now: String {
        let second = time(nil)
        return cached.withLock { cached in
            if cached.second != second { cached = (second, Self.format(second)) }
            return cached.text
        }
    }

    static func format(_ second: Int) -> String {
        var seconds = time_t(second)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
