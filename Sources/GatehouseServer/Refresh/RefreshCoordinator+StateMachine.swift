import Foundation

extension RefreshCoordinator {
    /// The decisions of one refresh attempt, without I/O: when to read the store, take the lease, wait,
    /// reuse a credential another request (on any instance) stored, or call the provider.
    ///
    /// The coordinator performs each ``Action`` and feeds back what it observed. A refresh at the provider
    /// happens only while this instance holds the session's lease *and* a re-read under the lease still
    /// shows the version the caller saw, so a rotating refresh token is never spent twice; waiting for
    /// another holder is bounded by the deadline (a killed holder's lease lapses before it).
    struct StateMachine: Sendable {
        enum Action: Equatable, Sendable {
            /// Read the session from the store and report with ``storeRead(version:)``.
            case readStore
            /// Try to take the lease and report with ``leaseAttempted(acquired:now:)``.
            case acquireLease
            /// Pause briefly, then read the store again.
            case pauseThenReadStore
            /// Another request stored a newer credential: use it (release the lease if held).
            case useStored
            /// Call the provider; the lease is held.
            case callProvider
            /// The session is gone (ended elsewhere).
            case failSessionEnded
            /// Another instance held the lease until the deadline.
            case failTimedOut
        }

        private enum State: Equatable, Sendable {
            case checking
            case electing
            case holdingLease
            case done
        }

        private let seenVersion: Int
        private let force: Bool
        private let deadline: Date
        private var state: State = .checking

        /// - Parameters:
        ///   - seenVersion: the credential version the caller saw.
        ///   - force: refresh even if a newer credential was stored meanwhile.
        ///   - deadline: when to stop waiting for another holder of the lease.
        init(seenVersion: Int, force: Bool, deadline: Date) {
            self.seenVersion = seenVersion
            self.force = force
            self.deadline = deadline
        }

        /// The first step.
        func start() -> Action { .readStore }

        /// Whether the lease is held (so it must be released whatever happens next).
        var holdsLease: Bool { state == .holdingLease }

        /// The stored credential version, or nil when the session no longer exists.
        mutating func storeRead(version: Int?) -> Action {
            guard let version else {
                state = .done
                return .failSessionEnded
            }
            let newer = !force && version > seenVersion
            switch state {
            case .checking, .electing:
                if newer {
                    state = .done
                    return .useStored
                }
                state = .electing
                return .acquireLease
            case .holdingLease:
                // Another instance may have finished between our last read and taking the lease.
                if newer { return .useStored }
                return .callProvider
            case .done:
                preconditionFailure("storeRead after the attempt finished")
            }
        }

        mutating func leaseAttempted(acquired: Bool, now: Date) -> Action {
            precondition(state == .electing, "leaseAttempted outside the election")
            if acquired {
                state = .holdingLease
                return .readStore
            }
            guard now < deadline else {
                state = .done
                return .failTimedOut
            }
            return .pauseThenReadStore
        }
    }
}
