import NIOCore
import Synchronization

/// `limits.max_connections_per_client`: how many connections one client address holds open at once, over every
/// listener and event loop of the gateway. A connection past the bound is closed as soon as it is accepted, before
/// any byte of it is read (nginx's `limit_conn`), so that one client cannot hold the gateway's sockets.
///
/// One instance per gateway; its handler (``ClientConnectionLimiter/Handler``) is the first in each connection's
/// pipeline.
final class ClientConnectionLimiter: Sendable {
    let maxPerClient: Int
    private let open = Mutex<[String: Int]>([:])

    init(maxPerClient: Int) {
        self.maxPerClient = maxPerClient
    }

    /// Counts a new connection from `address`; `false` (and nothing counted) when it would be one too many.
    func admit(_ address: String) -> Bool {
        open.withLock { open in
            let count = open[address, default: 0]
            guard count < maxPerClient else { return false }
            open[address] = count + 1
            return true
        }
    }

    /// A connection ``admit(_:)`` counted has ended.
    func release(_ address: String) {
        open.withLock { open in
            let count = open[address, default: 0] - 1
            open[address] = count > 0 ? count : nil
        }
    }

    /// Open connections from `address` (for tests and the log).
    func count(of address: String) -> Int {
        open.withLock { $0[address, default: 0] }
    }

    /// Admits or closes a connection when it becomes active, and releases its count when it ends.
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny

        private let limiter: ClientConnectionLimiter
        /// The address counted for this connection, once admitted.
        private var counted: String?
        /// Admitted or refused already (the pipeline may be set up before or after the channel is active).
        private var decided = false

        init(limiter: ClientConnectionLimiter) {
            self.limiter = limiter
        }

        func handlerAdded(context: ChannelHandlerContext) {
            if context.channel.isActive { admit(context) }
        }

        func channelActive(context: ChannelHandlerContext) {
            admit(context)
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            release()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            release()
        }

        private func admit(_ context: ChannelHandlerContext) {
            guard !decided, let address = context.channel.remoteAddress?.ipAddress else { return }
            decided = true
            if limiter.admit(address) {
                counted = address
            } else {
                context.close(promise: nil)
            }
        }

        private func release() {
            if let address = counted {
                counted = nil
                limiter.release(address)
            }
        }
    }
}
