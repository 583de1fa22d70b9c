import NIOHTTP1

/// A session stored by `gatehouse login`, as `whoami`, `api` and `logout` use it: sends requests with its
/// token (and DPoP proofs when bound) and keeps the newest `DPoP-Nonce` the gateway sends in the store.
struct SignedInSession {
    let store: CredentialStore
    private(set) var credential: StoredCredential

    /// The stored session of `gateway`, or the only one stored when `gateway` is nil.
    static func load(gateway: String?) throws -> SignedInSession {
        let store = try CredentialStore.standard()
        return SignedInSession(store: store, credential: try store.entry(for: gateway))
    }

    /// The gateway's base URL.
    var gateway: String { credential.gateway }

    /// The CA file to trust: `--ca-file` when given, else the one the sign-in was given.
    func caFile(given: String?) -> String? { given ?? credential.caFile }

    /// Sends a request of this session; a new `DPoP-Nonce` is stored with the entry.
    mutating func send(
        _ client: GatewayClient, _ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil
    ) async throws -> GatewayResponse {
        let response = try await client.send(
            method, path, headers: headers, body: body, authorization: try RequestAuthorization(credential))
        if let nonce = response.dpopNonce, nonce != credential.dpopNonce {
            credential.dpopNonce = nonce
            let gateway = credential.gateway
            try store.update { entries in entries[gateway]?.dpopNonce = nonce }
        }
        return response
    }

    /// Removes the entry from the store.
    func forget() throws {
        let gateway = credential.gateway
        try store.update { entries in entries[gateway] = nil }
    }

    /// The failure for an answer the command did not expect, with a hint to sign in again on a 401.
    func failure(_ response: GatewayResponse) -> ClientFailure {
        var failure = response.failure
        if response.status == 401 {
            failure.message += " (sign in again: gatehouse login --gateway \(gateway))"
        }
        return failure
    }
}
