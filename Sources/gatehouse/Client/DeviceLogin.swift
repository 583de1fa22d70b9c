import Foundation
import GatehouseCore
import NIOHTTP1

/// `gatehouse login --device`: device sign-in (RFC 8628's shape) for a terminal without a browser. Asks the
/// gateway for a code with a proof of a new DPoP key, tells the person where to type it (stderr), polls
/// `POST /v1/device/token` at the interval the gateway gives (5 s longer after each `slow_down`) until the
/// person has signed in, and returns the session bound to the key.
struct DeviceLogin: Sendable {
    let client: GatewayClient
    /// `--provider`: the provider the page offers (nil: the person chooses).
    let provider: String?
    let key: DPoPKey

    /// The `{"error": …}` body of the device endpoints.
    private struct DeviceError: Decodable {
        var error: String
        var errorDescription: String?
        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
        }
        var summary: String { errorDescription.map { "\(error): \($0)" } ?? error }
    }

    /// Runs the sign-in; returns the session and the gateway's newest DPoP nonce.
    func run() async throws -> (SessionGrantResponse, String?) {
        var nonce: String?
        let (authorization, authorizeNonce) = try await post(
            "/v1/device/authorize", provider.map { [("provider", $0)] } ?? [], nonce: &nonce)
        guard authorization.status == 200 else { throw failure(authorization) }
        nonce = authorizeNonce
        let answer = try authorization.decode(DeviceCodeAnswer.self)
        ClientOutput.error("To sign in, open \(answer.verificationURI) in a browser and enter the code: \(answer.userCode)")
        if let complete = answer.verificationURIComplete { ClientOutput.error("(or open \(complete))") }
        ClientOutput.error("Waiting for the sign-in (the code expires in \(answer.expiresIn) s)…")

        var interval = max(1, answer.interval ?? 5)
        let deadline = Date().addingTimeInterval(TimeInterval(answer.expiresIn))
        while Date() < deadline {
            try await Task.sleep(for: .seconds(interval))
            let (response, fresh) = try await post(
                "/v1/device/token", [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", answer.deviceCode)],
                nonce: &nonce)
            nonce = fresh
            if response.status == 201 || response.status == 200 { return (try response.decode(SessionGrantResponse.self), fresh) }
            guard let error = try? JSONDecoder().decode(DeviceError.self, from: response.body) else { throw response.failure }
            switch error.error {
            case "authorization_pending": continue
            case "slow_down": interval += 5
            case "access_denied": throw ClientFailure("the sign-in was denied in the browser")
            case "expired_token": throw ClientFailure("the code expired before the sign-in was finished; run gatehouse login --device again")
            default: throw ClientFailure("the gateway refused the device sign-in (\(error.summary))")
            }
        }
        throw ClientFailure("the code expired before the sign-in was finished; run gatehouse login --device again")
    }

    /// A form POST with a fresh proof of ``key``, sent again once with the gateway's nonce when it asks for one.
    private func post(_ path: String, _ form: [(String, String)], nonce: inout String?) async throws -> (GatewayResponse, String?) {
        let body = Array(ClientEncoding.query(form).utf8)
        for attempt in 0..<2 {
            let response = try await client.send(
                .POST, path, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")], body: body,
                authorization: RequestAuthorization(dpopKey: key, nonce: nonce))
            let asked = (try? JSONDecoder().decode(DeviceError.self, from: response.body))?.error == "use_dpop_nonce"
            if let fresh = response.header("DPoP-Nonce") { nonce = fresh }
            if asked, attempt == 0, response.header("DPoP-Nonce") != nil { continue }
            return (response, nonce)
        }
        preconditionFailure("unreachable: the loop returns on its second pass")
    }

    private func failure(_ response: GatewayResponse) -> ClientFailure {
        if let error = try? JSONDecoder().decode(DeviceError.self, from: response.body) {
            return ClientFailure("the gateway refused the device sign-in (\(error.summary))")
        }
        if response.status == 404 { return ClientFailure("this gateway does not offer device sign-in (\(response.url): 404)") }
        return response.failure
    }
}
