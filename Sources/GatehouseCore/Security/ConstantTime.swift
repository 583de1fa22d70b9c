/// Comparisons that do not leak where two secrets differ.
public enum ConstantTime {
    /// Whether two byte collections (`Data`, the UTF-8 of tokens and hashes) are equal, looking at every byte.
    /// Contiguous bytes (a native string's, `Data`'s) are compared through buffer pointers: a DPoP-bound request
    /// compares a thumbprint and a hash this way, where iterating two string views in step cost more.
    @inlinable
    public static func equal(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        let contiguous = lhs.withContiguousStorageIfAvailable { left in
            rhs.withContiguousStorageIfAvailable { right in equalBytes(left, right) }
        }
        if let contiguous = contiguous ?? nil { return contiguous }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }

    /// Two buffers of the same length compared byte by byte, every byte looked at.
    @inlinable
    static func equalBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        var difference: UInt8 = 0
        for index in 0..<lhs.count { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
