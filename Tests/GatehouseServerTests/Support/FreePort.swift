import NIOCore
import NIOPosix

/// A TCP port on 127.0.0.1 that is free right now (the gateway needs its public URL before it listens): bound to
/// port 0 by NIO's bootstrap, read back, released. (Not with `sockaddr_in` by hand: which clang module the test
/// target's compiler takes `sockaddr_in` from, Glibc or NIO's CNIOLinux, varies from build to build, and member
/// import visibility then refuses its fields.)
enum FreePort {
    static func next() -> Int {
        do {
            let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
            defer { try? channel.close().wait() }
            return channel.localAddress?.port ?? 0
        } catch {
            return 0
        }
    }
}
