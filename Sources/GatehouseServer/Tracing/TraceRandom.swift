import Synchronization

/// The random numbers of the sampling decision and of the ids of unsampled traces: SplitMix64 over one atomic
/// counter seeded from the system's generator, so a draw is one relaxed atomic add and a few multiplications
/// (no lock, no system call, no allocation).
///
/// Not a cryptographic generator, and it need not be: trace ids are not secrets (W3C Trace Context §8.1 — they
/// travel in headers to every hop and appear in logs) and grant nothing. What they need is to be unique, and the
/// SplitMix64 output function is a bijection of the counter, so no two draws of one process repeat before 2⁶⁴ of
/// them; the seed keeps two processes apart. Sampled traces keep the exporter's own ids.
final class TraceRandom: Sendable {
    private static let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15
    private let state: Atomic<UInt64>

    init(seed: UInt64) {
        state = Atomic(seed)
    }

    convenience init() {
        var system = SystemRandomNumberGenerator()
        self.init(seed: system.next())
    }

    /// Four fresh numbers, drawn at once.
    func draw() -> (UInt64, UInt64, UInt64, UInt64) {
        let last = state.wrappingAdd(4 &* Self.gamma, ordering: .relaxed).newValue
        return (
            Self.mix(last &- 3 &* Self.gamma), Self.mix(last &- 2 &* Self.gamma), Self.mix(last &- Self.gamma), Self.mix(last)
        )
    }

    /// SplitMix64's finalizer (Steele, Lea, Flood 2014).
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
