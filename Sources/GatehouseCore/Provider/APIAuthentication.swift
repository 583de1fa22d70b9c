/// How a credential is presented to a provider's own API (`api.auth`): a named attachment style.
///
/// The styles every kind may choose are here (``bearer``, ``query(parameter:)``, ``none``); a kind with a
/// style of its own (ACS's `WRAP`) defines it in its folder and lists it in
/// ``ProviderKind/apiAuthenticationStyles``, which makes it a valid `auth:` value for that kind.
public struct APIAuthentication: Sendable, Equatable, CustomStringConvertible {
    /// The `auth:` value in provider files.
    public let name: String
    /// The query parameter of ``query(parameter:)``.
    public let parameter: String?
    private let apply: @Sendable (Credential, inout OutgoingRequest) -> Void

    /// A style named `name` that changes the request with `attach`.
    public init(name: String, parameter: String? = nil, attach: @escaping @Sendable (Credential, inout OutgoingRequest) -> Void) {
        self.name = name
        self.parameter = parameter
        self.apply = attach
    }

    /// Attaches the credential to a request for the provider's API.
    public func attach(_ credential: Credential, to request: inout OutgoingRequest) {
        apply(credential, &request)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name && lhs.parameter == rhs.parameter }

    public var description: String { parameter.map { "\(name)(\($0))" } ?? name }

    /// `Authorization: Bearer <token>`.
    public static let bearer = APIAuthentication(name: "bearer") { credential, request in
        request.headers.append(("Authorization", "Bearer \(credential.accessToken)"))
    }

    /// `?<parameter>=<token>` (SPiD's `oauth_token`). The client cannot choose the token: a parameter of
    /// that name it sent is replaced.
    public static func query(parameter: String) -> APIAuthentication {
        APIAuthentication(name: "query", parameter: parameter) { credential, request in
            request.url = FormEncoding.appending([(parameter, credential.accessToken)], to: FormEncoding.removing(parameter, from: request.url))
        }
    }

    /// Nothing attached.
    public static let none = APIAuthentication(name: "none") { _, _ in }
}
