/// How a client signs in with a provider (`login` in `GET /v1/providers`).
public enum LoginStyle: String, Sendable, Codable {
    /// Browser redirect to the provider and back (`/v1/auth/{id}/login`).
    case redirect
    /// The client posts an identity assertion (`/v1/auth/{id}/assertion`).
    case assertion
    /// The client posts a captured token (`/v1/auth/{id}/token`).
    case token
}
