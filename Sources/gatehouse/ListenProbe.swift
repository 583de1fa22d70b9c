#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tries the listen address before anything is created (the store's files, keys), so that a port in use
/// is one clear line and an exit, not a raw bind error after start-up work.
enum ListenProbe {
    /// A sentence saying why `host:port` cannot be listened on, or `nil` when it can (or cannot be told).
    static func problem(host: String, port: Int) -> String? {
        guard port > 0 else { return nil }
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else {
            return "cannot listen on \(host):\(port): the host name does not resolve"
        }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var one: Int32 = 1
        // As the server binds: SO_REUSEADDR, so a socket in TIME_WAIT is not mistaken for a listener.
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 else { return nil }
        switch errno {
        case EADDRINUSE:
            return
                "cannot listen on \(host):\(port): the address is in use (another process listens there; choose another with --listen or 'listen:')"
        case EACCES:
            return "cannot listen on \(host):\(port): permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)"
        case EADDRNOTAVAIL:
            return "cannot listen on \(host):\(port): no interface of this machine has that address"
        default:
            return "cannot listen on \(host):\(port): \(String(cString: strerror(errno)))"
        }
    }
}
