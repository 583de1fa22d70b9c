/// Comparisons that do not leak where two secrets differ.
public enum ConstantTime {
    /// Whether two byte collections (`Data`, the UTF-8 of tokens and hashes) are equal, looking at every byte.
    @inlinable
    public static func equal(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }
}
