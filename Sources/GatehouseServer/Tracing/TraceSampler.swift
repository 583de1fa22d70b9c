/// The one sampling decision of a request, taken at its start (parent-based, as `sample_ratio` says): a client's
/// `traceparent` decides by its `sampled` flag; without one (or a malformed one, which counts as none) the ratio
/// decides with a uniform draw.
struct TraceSampler: Sendable {
    /// Draws below it are sampled: `sample_ratio` × 2⁶⁴.
    let threshold: UInt64
    /// `sample_ratio` is 1 (or more): every new trace is sampled.
    let always: Bool

    init(ratio: Double) {
        always = ratio >= 1
        threshold = ratio <= 0 || ratio.isNaN ? 0 : ratio >= 1 ? .max : UInt64(ratio * 18_446_744_073_709_551_616.0)
    }

    /// Whether the request is sampled: by its parent's flag, else by `draw`.
    func samples(parent: TraceParent?, draw: UInt64) -> Bool {
        if let parent { return parent.sampled }
        return always || draw < threshold
    }
}
