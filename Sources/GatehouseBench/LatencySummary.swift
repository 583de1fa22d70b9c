/// Percentiles of a set of latencies, in microseconds (nearest rank).
struct LatencySummary: Sendable {
    let count: Int
    let p50: Double
    let p90: Double
    let p99: Double
    let max: Double
    let mean: Double

    /// - Parameter microseconds: one latency per operation; must not be empty.
    init(_ microseconds: [Double]) {
        precondition(!microseconds.isEmpty, "no latencies")
        let sorted = microseconds.sorted()
        func rank(_ p: Double) -> Double {
            let index = Int((p * Double(sorted.count)).rounded(.up)) - 1
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, index))]
        }
        count = sorted.count
        p50 = rank(0.50)
        p90 = rank(0.90)
        p99 = rank(0.99)
        max = sorted[sorted.count - 1]
        mean = sorted.reduce(0, +) / Double(sorted.count)
    }

    /// `p50_us=… p90_us=… p99_us=… max_us=… mean_us=…`, one decimal.
    var fields: String {
        let us = Bench.oneDecimal
        return "p50_us=\(us(p50)) p90_us=\(us(p90)) p99_us=\(us(p99)) max_us=\(us(max)) mean_us=\(us(mean))"
    }
}
