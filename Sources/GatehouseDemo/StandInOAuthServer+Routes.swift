import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

extension StandInOAuthServer {
    /// Form bodies are small; anything larger is refused rather than buffered.
    static let maxFormBytes = 64 * 1024

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/.well-known/oauth-authorization-server") { _, _ in self.metadata() }
        router.get("/authorize") { request, _ in
            await self.authorize(fields: Self.firstValues(FormEncoding.decode(request.uri.query ?? "")))
        }
        router.post("/authorize") { request, _ in
            try await self.authorizeSubmit(fields: Self.form(of: request))
        }
        router.post("/token") { request, _ in try await self.token(request) }
        router.post("/revoke") { request, _ in try await self.revoke(request) }
        router.get("/userinfo") { request, _ in
            await self.withBearer(request, requiredScope: nil) { record in
                await self.state.recordUserinfoRequest()
                return .json(Self.profile(of: record.subject.username))
            }
        }
        router.get("/api/grades/@me") { request, _ in
            let required = self.configuration.allowedScopes.contains("grades") ? "grades" : nil
            return await self.withBearer(request, requiredScope: required) { record in
                await self.state.recordAPIRequest()
                return .json(Self.grades(of: record.subject.username))
            }
        }
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete, .head, .options] {
            router.on("/api/echo/**", method: method) { request, _ in
                try await self.echo(request)
            }
        }
        return router
    }

    // MARK: Authorization endpoint

    private func authorize(fields: [String: String]) async -> Response {
        switch AuthorizationRequest.parse(fields, configuration: configuration) {
        case .failure(let failure): return refuse(failure)
        case .success(let request): return .html(loginPage(for: request))
        }
    }

    private func authorizeSubmit(fields: [String: String]) async -> Response {
        let request: AuthorizationRequest
        switch AuthorizationRequest.parse(fields, configuration: configuration) {
        case .failure(let failure): return refuse(failure)
        case .success(let parsed): request = parsed
        }
        if let deny = fields["deny"], !deny.isEmpty {
            return refuse(
                .redirect(redirectURI: request.redirectURI, state: request.state, error: "access_denied", description: "the user denied access")
            )
        }
        let username = fields["username"] ?? ""
        guard let password = configuration.users[username],
            ConstantTime.equal(Data(password.utf8), Data((fields["password"] ?? "").utf8))
        else {
            return .html(loginPage(for: request, error: "Wrong username or password."))
        }
        let code = await state.issueCode(
            clientID: request.clientID,
            redirectURI: request.redirectURI,
            codeChallenge: request.codeChallenge,
            username: username,
            scope: request.scope
        )
        return .found(FormEncoding.appending([("code", code), ("state", request.state), ("iss", baseURL)], to: request.redirectURI))
    }

    private func refuse(_ failure: AuthorizationRequest.Failure) -> Response {
        switch failure {
        case .page(let message):
            return .html(Self.errorPage(message), status: .badRequest)
        case .redirect(let redirectURI, let state, let error, let description):
            var fields = [("error", error), ("error_description", description)]
            if let state { fields.append(("state", state)) }
            fields.append(("iss", baseURL))
            return .found(FormEncoding.appending(fields, to: redirectURI))
        }
    }

    // MARK: Token endpoint

    private func token(_ request: Request) async throws -> Response {
        let fields = try await Self.form(of: request)
        let grantType = fields["grant_type"] ?? ""
        guard let delay = await state.admitTokenRequest(grantType: grantType) else { return .temporarilyUnavailable() }
        if delay > .zero { try await Task.sleep(for: delay) }

        let outcome: Result<[String: JSONValue], OAuthError>
        switch authenticateClient(request, fields: fields) {
        case .failure(let error):
            outcome = .failure(error)
        case .success(let (clientID, method)):
            await state.recordClientAuthentication(method)
            outcome = await grant(grantType, clientID: clientID, fields: fields)
        }
        switch outcome {
        case .success(let body):
            return .json(body, headers: [.cacheControl: "no-store", .pragma: "no-cache"])
        case .failure(let error):
            await state.recordTokenFailure()
            return oauthErrorResponse(error)
        }
    }

    private func grant(_ grantType: String, clientID: String, fields: [String: String]) async -> Result<[String: JSONValue], OAuthError> {
        switch grantType {
        case "":
            return .failure(.invalidRequest("grant_type is missing"))
        case "authorization_code":
            guard let code = fields["code"], !code.isEmpty else { return .failure(.invalidRequest("code is missing")) }
            return await state.redeem(code: code, clientID: clientID, redirectURI: fields["redirect_uri"], codeVerifier: fields["code_verifier"])
        case "refresh_token":
            guard let refreshToken = fields["refresh_token"], !refreshToken.isEmpty else {
                return .failure(.invalidRequest("refresh_token is missing"))
            }
            let scope = fields["scope"].map { $0.split(separator: " ").map(String.init) }
            return await state.refresh(refreshToken: refreshToken, clientID: clientID, requestedScope: scope)
        default:
            return .failure(.unsupportedGrantType("grant_type \(grantType) is not supported"))
        }
    }

    /// Client authentication at `/token` and `/revoke` (RFC 6749 §2.3.1): Basic or form fields for a
    /// confidential client; `client_id` alone for a public one.
    func authenticateClient(_ request: Request, fields: [String: String]) -> Result<(String, ClientAuthentication), OAuthError> {
        let configuredID = configuration.clientID
        if let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("basic ") {
            let encoded = authorization.dropFirst("basic ".count).trimmingCharacters(in: .whitespaces)
            guard let decoded = Data(base64Encoded: encoded).map({ String(decoding: $0, as: UTF8.self) }),
                let colon = decoded.firstIndex(of: ":")
            else {
                return .failure(.invalidClient("the Basic credentials are malformed"))
            }
            // Both halves are form-encoded before they are joined (RFC 6749 §2.3.1).
            let id = Self.formDecoded(decoded[..<colon])
            let secret = Self.formDecoded(decoded[decoded.index(after: colon)...])
            guard id == configuredID, fields["client_id"].map({ $0 == id }) ?? true else {
                return .failure(.invalidClient("unknown client"))
            }
            if let expected = configuration.clientSecret {
                guard ConstantTime.equal(Data(expected.utf8), Data(secret.utf8)) else {
                    return .failure(.invalidClient("wrong client secret"))
                }
            }
            return .success((id, .basic))
        }
        if let secret = fields["client_secret"] {
            guard fields["client_id"] == configuredID else { return .failure(.invalidClient("unknown client")) }
            guard let expected = configuration.clientSecret else {
                return .failure(.invalidClient("a public client has no secret"))
            }
            guard ConstantTime.equal(Data(expected.utf8), Data(secret.utf8)) else {
                return .failure(.invalidClient("wrong client secret"))
            }
            return .success((configuredID, .post))
        }
        guard configuration.clientSecret == nil else {
            return .failure(.invalidClient("client authentication is required"))
        }
        guard let id = fields["client_id"], !id.isEmpty else {
            return .failure(.invalidClient("a public client must send client_id"))
        }
        guard id == configuredID else { return .failure(.invalidClient("unknown client")) }
        return .success((id, .none))
    }

    private func oauthErrorResponse(_ error: OAuthError) -> Response {
        var headers: HTTPFields = [.cacheControl: "no-store", .pragma: "no-cache"]
        if error.code == "invalid_client" {
            headers[.wwwAuthenticate] = #"Basic realm="OAuth Server""#
        }
        return .json(error.body, status: error.status, headers: headers)
    }

    // MARK: Revocation endpoint

    private func revoke(_ request: Request) async throws -> Response {
        let fields = try await Self.form(of: request)
        if await state.isUnavailable { return .temporarilyUnavailable() }
        switch authenticateClient(request, fields: fields) {
        case .failure(let error):
            return oauthErrorResponse(error)
        case .success(let (_, method)):
            await state.recordClientAuthentication(method)
        }
        guard let token = fields["token"], !token.isEmpty else {
            return oauthErrorResponse(.invalidRequest("token is missing"))
        }
        await state.revoke(token: token, hint: fields["token_type_hint"])
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }

    // MARK: Resource server

    /// Runs `body` for a request with a valid access token, else answers as RFC 6750 §3 says.
    /// The token comes from `Authorization: Bearer`, or from the `access_token` or `oauth_token` query
    /// parameter (SPiD style), so query-style credential attachment can be tested too.
    private func withBearer(
        _ request: Request,
        requiredScope: String?,
        _ body: (StandInOAuthState.AccessTokenRecord) async throws -> Response
    ) async rethrows -> Response {
        if await state.isUnavailable { return .temporarilyUnavailable() }
        let realm = #"Bearer realm="Resource Server""#
        guard let token = Self.accessToken(in: request) else {
            return .json(
                ["error": .string("invalid_request"), "error_description": .string("no access token was presented")],
                status: .unauthorized,
                headers: [.wwwAuthenticate: realm]
            )
        }
        switch await state.authenticate(accessToken: token, requiredScope: requiredScope) {
        case .success(let record):
            return try await body(record)
        case .failure(let error):
            var challenge = realm + #", error="\#(error.code)", error_description="\#(error.description)""#
            if let requiredScope, error.code == "insufficient_scope" { challenge += #", scope="\#(requiredScope)""# }
            return .json(error.body, status: error.status, headers: [.wwwAuthenticate: challenge])
        }
    }

    static func accessToken(in request: Request) -> String? {
        if let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("bearer ") {
            let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
            return token.isEmpty ? nil : token
        }
        let query = firstValues(FormEncoding.decode(request.uri.query ?? ""))
        return [query["access_token"], query["oauth_token"]].compactMap { $0 }.first { !$0.isEmpty }
    }

    private func echo(_ request: Request) async throws -> Response {
        try await withBearer(request, requiredScope: nil) { record in
            await self.state.recordAPIRequest()
            var bodyBytes = 0
            for try await buffer in request.body { bodyBytes += buffer.readableBytes }
            let viaHeader = request.headers[.authorization] != nil
            return .json([
                "method": .string(request.method.rawValue),
                "path": .string(request.uri.path),
                "query": .string(request.uri.query ?? ""),
                "body_bytes": .number(Double(bodyBytes)),
                "sub": .string(record.subject.username),
                "token_via": .string(viaHeader ? "header" : "query"),
            ])
        }
    }

    static func profile(of username: String) -> [String: JSONValue] {
        [
            "sub": .string(username),
            "preferred_username": .string(username),
            "email": .string("\(username)@example.test"),
            "email_verified": .bool(true),
            "name": .string("\(username.prefix(1).uppercased())\(username.dropFirst()) Example"),
        ]
    }

    static func grades(of username: String) -> [String: JSONValue] {
        let grades: [(String, Double)] = [("Mathematics", 8), ("Physics", 7.5), ("Computer Science", 9)]
        return [
            "id": .string(username),
            "grades": .array(grades.map { course, grade in .object(["course": .string(course), "grade": .number(grade)]) }),
        ]
    }

    // MARK: Metadata

    /// RFC 8414 authorization server metadata, so a gateway can be pointed at one URL.
    private func metadata() -> Response {
        .json([
            "issuer": .string(baseURL),
            "authorization_endpoint": .string(authorizationEndpoint),
            "token_endpoint": .string(tokenEndpoint),
            "revocation_endpoint": .string(revocationEndpoint),
            "userinfo_endpoint": .string(userinfoEndpoint),
            "response_types_supported": .array([.string("code")]),
            "grant_types_supported": .array([.string("authorization_code"), .string("refresh_token")]),
            "code_challenge_methods_supported": .array([.string("S256")]),
            "token_endpoint_auth_methods_supported": .array(
                (configuration.clientSecret == nil ? ["none"] : ["client_secret_basic", "client_secret_post"]).map(JSONValue.string)
            ),
            "scopes_supported": .array(configuration.allowedScopes.map(JSONValue.string)),
            "authorization_response_iss_parameter_supported": .bool(true),
        ])
    }

    // MARK: Form helpers

    /// The first value of each name; later duplicates are ignored.
    static func firstValues(_ pairs: [(String, String)]) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in pairs where fields[name] == nil { fields[name] = value }
        return fields
    }

    static func form(of request: Request) async throws -> [String: String] {
        let buffer = try await request.body.collect(upTo: maxFormBytes)
        return firstValues(FormEncoding.decode(String(buffer: buffer)))
    }

    private static func formDecoded(_ text: Substring) -> String {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
    }
}
