public import Glibc

/// Where log lines go: standard error, a whole buffer per call (the kernel keeps one `write(2)` of a pipe
/// below `PIPE_BUF` in one piece; longer batches are whole lines on their own).
public enum LogOutput {
    /// Writes all of `bytes` to `descriptor`, going on after interrupted and partial writes. A descriptor
    /// that fails otherwise (standard error closed) is left alone: there is nothing to report it to.
    public static func write(_ bytes: [UInt8], to descriptor: Int32 = STDERR_FILENO) {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
