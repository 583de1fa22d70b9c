/// Why a stand-in server could not start.
public struct StandInError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case alreadyStarting
        case stoppedBeforeListening
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// `start()` was called while another `start()` was still binding.
    public static let alreadyStarting = StandInError(.alreadyStarting)
    /// The server stopped before it reported a bound port.
    public static let stoppedBeforeListening = StandInError(.stoppedBeforeListening)

    public var description: String {
        switch code {
        case .alreadyStarting: "the stand-in is already starting"
        case .stoppedBeforeListening: "the stand-in stopped before it was listening"
        }
    }
}
