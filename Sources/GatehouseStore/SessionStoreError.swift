/// A store write that conflicts with what is already stored.
///
/// A struct around a private code, so new cases do not break callers.
public struct SessionStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case duplicateSession
        case duplicatePending
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// A session with the same id or token hash already exists.
    public static let duplicateSession = SessionStoreError(.duplicateSession)
    /// A pending record with the same key hash and purpose already exists.
    public static let duplicatePending = SessionStoreError(.duplicatePending)

    public var description: String {
        switch code {
        case .duplicateSession: "A session with this id or token hash already exists."
        case .duplicatePending: "A pending record with this key and purpose already exists."
        }
    }
}
