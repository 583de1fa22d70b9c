/// Browser logins return to a same-origin path only: no scheme, no host, no `//` (no open redirect).
enum ReturnToPolicy {
    static func isSafe(_ path: String) -> Bool {
        guard path.hasPrefix("/"), !path.hasPrefix("//"), !path.hasPrefix("/\\") else { return false }
        return !path.contains("\\") && !path.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }
}
