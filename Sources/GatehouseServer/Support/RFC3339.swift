import Foundation

/// RFC 3339 UTC timestamps, whole seconds (`2026-11-22T09:00:00Z`).
enum RFC3339 {
    static func string(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}
