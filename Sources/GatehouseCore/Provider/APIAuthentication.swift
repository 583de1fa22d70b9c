/// How a credential is presented to a provider's own API (`api.auth`).
public enum APIAuthentication: Sendable, Equatable {
    /// `Authorization: Bearer <token>`.
    case bearer
    /// `?<parameter>=<token>` (SPiD's `oauth_token`).
    case query(parameter: String)
    /// `Authorization: WRAP access_token="<token>"` (Azure ACS).
    case wrap
    /// Nothing attached.
    case none

    public func attach(_ credential: Credential, to request: inout OutgoingRequest) {
        switch self {
        case .bearer:
            request.headers.append(("Authorization", "Bearer \(credential.accessToken)"))
        case .query(let parameter):
            // The client cannot choose the token: a parameter of that name it sent is replaced.
            request.url = FormEncoding.appending([(parameter, credential.accessToken)], to: FormEncoding.removing(parameter, from: request.url))
        case .wrap:
            request.headers.append(("Authorization", "WRAP access_token=\"\(credential.accessToken)\""))
        case .none:
            break
        }
    }
}
