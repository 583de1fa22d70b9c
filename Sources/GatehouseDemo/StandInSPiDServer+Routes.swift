import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

extension StandInSPiDServer {
    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        for path in ["/flow/login", "/flow/auth"] {
            router.get(RouterPath(path)) { request, _ in
                self.login(fields: StandInOAuthServer.firstValues(FormEncoding.decode(request.uri.query ?? "")), action: path)
            }
            router.post(RouterPath(path)) { request, _ in
                try await self.loginSubmit(fields: StandInOAuthServer.form(of: request), action: path)
            }
        }
        router.post("/oauth/token") { request, _ in try await self.token(request) }
        router.get("/logout") { request, _ in await self.browserLogout(request) }

        for path in ["/api/2/me", "/api/2/me.json"] {
            router.get(RouterPath(path)) { request, _ in
                await self.withAccessToken(request, route: .me) { _, record, _ in
                    Self.apiResponse(object: "User", route: .me, data: self.user(record.subject))
                }
            }
        }
        for path in ["/api/2/logout", "/api/2/logout.json"] {
            router.get(RouterPath(path)) { request, _ in
                await self.withAccessToken(request, route: .logout) { token, _, _ in
                    await self.state.logout(accessToken: token)
                    return Self.apiResponse(object: "string", route: .logout, data: .string("OK"))
                }
            }
        }
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete, .head, .options] {
            router.on("/api/2/echo/**", method: method) { request, _ in
                try await self.echo(request)
            }
            router.on("/api/2/**", method: method) { request, _ in
                await self.withAccessToken(request, route: .unknown) { _, _, _ in
                    Self.apiFailure(status: .notFound, type: "ApiException", description: "No such endpoint", route: .unknown)
                }
            }
        }
        return router
    }

    // MARK: Login flow

    private func login(fields: [String: String], action: String) -> Response {
        switch LoginRequest.parse(fields, configuration: configuration) {
        case .failure(let failure): return refuse(failure)
        case .success(let request): return .html(loginPage(for: request, action: action))
        }
    }

    private func loginSubmit(fields: [String: String], action: String) async -> Response {
        let request: LoginRequest
        switch LoginRequest.parse(fields, configuration: configuration) {
        case .failure(let failure): return refuse(failure)
        case .success(let parsed): request = parsed
        }
        if let cancel = fields["cancel"], !cancel.isEmpty {
            return refuse(.redirect(redirectURI: request.cancelRedirectURI ?? request.redirectURI, state: request.state, error: "access_denied"))
        }
        let email = (fields["email"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        guard let user = configuration.users.first(where: { $0.key.lowercased() == email }),
            ConstantTime.equal(Data(user.value.password.utf8), Data((fields["password"] ?? "").utf8))
        else {
            return .html(loginPage(for: request, action: action, error: "Wrong e-mail address or password."))
        }
        let code = await state.issueCode(
            clientID: request.clientID,
            redirectURI: request.redirectURI,
            codeChallenge: request.codeChallenge,
            email: user.key
        )
        var query = [("code", code)]
        if let state = request.state { query.append(("state", state)) }
        return .found(FormEncoding.appending(query, to: request.redirectURI))
    }

    private func refuse(_ failure: LoginRequest.Failure) -> Response {
        switch failure {
        case .page(let message):
            return .html(Self.errorPage(message), status: .badRequest)
        case .redirect(let redirectURI, let state, let error):
            var fields = [("error", error)]
            if let state { fields.append(("state", state)) }
            return .found(FormEncoding.appending(fields, to: redirectURI))
        }
    }

    // MARK: Browser logout

    /// `GET /logout?client_id=…&redirect_uri=…`: ends the browser session (only counted here; tokens stay
    /// valid, since that the real one deletes them is unconfirmed) and returns to a registered URI.
    private func browserLogout(_ request: Request) async -> Response {
        let fields = StandInOAuthServer.firstValues(FormEncoding.decode(request.uri.query ?? ""))
        guard let clientID = fields["client_id"], clientID == configuration.clientID else {
            return .html(Self.errorPage("Unknown client ID \(fields["client_id"] ?? "")."), status: .badRequest)
        }
        guard let redirectURI = fields["redirect_uri"], LoginRequest.isRegistered(redirectURI: redirectURI, configuration: configuration) else {
            return .html(Self.errorPage("The redirect_uri is missing or not registered for this client."), status: .badRequest)
        }
        await state.recordBrowserLogout()
        return .found(redirectURI)
    }

    // MARK: Token endpoint

    private func token(_ request: Request) async throws -> Response {
        let fields = try await StandInOAuthServer.form(of: request)
        let grantType = fields["grant_type"] ?? ""
        guard let delay = await state.admitTokenRequest(grantType: grantType) else { return Self.tokenUnavailable() }
        if delay > .zero { try await Task.sleep(for: delay) }

        let outcome: Result<[String: JSONValue], OAuthError>
        switch authenticateClient(request, fields: fields) {
        case .failure(let error):
            outcome = .failure(error)
        case .success(let method):
            await state.recordClientAuthentication(method)
            outcome = await grant(grantType, fields: fields)
        }
        switch outcome {
        case .success(let body):
            return .json(body, headers: [.cacheControl: "no-store", .pragma: "no-cache"])
        case .failure(let error):
            await state.recordTokenFailure()
            return Self.tokenFailure(error)
        }
    }

    private func grant(_ grantType: String, fields: [String: String]) async -> Result<[String: JSONValue], OAuthError> {
        // Old SDKs add empty `scope=` and `state=`; they, like any other extra field, are ignored.
        switch grantType {
        case "":
            return .failure(.invalidRequest("grant_type is missing"))
        case "authorization_code":
            guard let code = fields["code"], !code.isEmpty else { return .failure(.invalidRequest("code is missing")) }
            return await state.redeem(
                code: code,
                clientID: configuration.clientID,
                redirectURI: fields["redirect_uri"],
                codeVerifier: fields["code_verifier"]
            )
        case "refresh_token":
            guard let refreshToken = fields["refresh_token"], !refreshToken.isEmpty else {
                return .failure(.invalidRequest("refresh_token is missing"))
            }
            return await state.refresh(refreshToken: refreshToken, clientID: configuration.clientID)
        default:
            return .failure(.unsupportedGrantType("grant_type \(grantType) is not supported"))
        }
    }

    /// SPiD client authentication: HTTP Basic `base64(client_id:client_secret)` or `client_id` +
    /// `client_secret` in the form. Basic halves are accepted raw or form-encoded (RFC 6749 §2.3.1).
    func authenticateClient(_ request: Request, fields: [String: String]) -> Result<ClientAuthentication, OAuthError> {
        let expectedID = configuration.clientID
        let expectedSecret = Data(configuration.clientSecret.utf8)
        if let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("basic ") {
            let encoded = authorization.dropFirst("basic ".count).trimmingCharacters(in: .whitespaces)
            guard let decoded = Data(base64Encoded: encoded).map({ String(decoding: $0, as: UTF8.self) }),
                let colon = decoded.firstIndex(of: ":")
            else {
                return .failure(.invalidClient("the Basic credentials are malformed"))
            }
            let id = String(decoded[..<colon])
            let secret = String(decoded[decoded.index(after: colon)...])
            guard id == expectedID || Self.formDecoded(id) == expectedID, fields["client_id"].map({ $0 == expectedID }) ?? true else {
                return .failure(.invalidClient("unknown client"))
            }
            guard ConstantTime.equal(expectedSecret, Data(secret.utf8)) || ConstantTime.equal(expectedSecret, Data(Self.formDecoded(secret).utf8))
            else {
                return .failure(.invalidClient("wrong client secret"))
            }
            return .success(.basic)
        }
        guard let id = fields["client_id"], !id.isEmpty, let secret = fields["client_secret"] else {
            return .failure(.invalidClient("client authentication is required"))
        }
        guard id == expectedID else { return .failure(.invalidClient("unknown client")) }
        guard ConstantTime.equal(expectedSecret, Data(secret.utf8)) else {
            return .failure(.invalidClient("wrong client secret"))
        }
        return .success(.post)
    }

    private static func formDecoded(_ text: String) -> String {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? text
    }

    private static func tokenUnavailable() -> Response {
        let error = OAuthError(code: "temporarily_unavailable", description: unavailableDescription, status: .serviceUnavailable)
        return .json(spidErrorBody(error), status: .serviceUnavailable, headers: [.retryAfter: "1", .cacheControl: "no-store"])
    }

    // MARK: API

    /// Where an API request carried its access token.
    enum TokenCarrier: String, Sendable {
        case query
        case header
        /// Both places, same value.
        case both
    }

    /// Runs `body` for an API request with a valid access token, else answers as SPiD does.
    /// The token comes from `oauth_token` in the query or `Authorization: Bearer`; both with different
    /// values → 400 `invalid_request`.
    private func withAccessToken(
        _ request: Request,
        route: APIRoute,
        _ body: (String, StandInSPiDState.AccessTokenRecord, TokenCarrier) async throws -> Response
    ) async rethrows -> Response {
        if await state.isUnavailable {
            return Self.apiFailure(
                status: .serviceUnavailable,
                type: "ApiException",
                description: Self.unavailableDescription,
                route: route,
                headers: [.retryAfter: "1"]
            )
        }
        let query = StandInOAuthServer.firstValues(FormEncoding.decode(request.uri.query ?? ""))
        let queryToken = query["oauth_token"].flatMap { $0.isEmpty ? nil : $0 }
        var headerToken: String?
        if let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("bearer ") {
            let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
            headerToken = token.isEmpty ? nil : token
        }
        let carrier: TokenCarrier
        let token: String
        switch (queryToken, headerToken) {
        case (let fromQuery?, let fromHeader?):
            guard fromQuery == fromHeader else {
                return Self.apiOAuthFailure(
                    .invalidRequest("the access token was sent both as oauth_token and in the Authorization header, with different values"),
                    route: route
                )
            }
            (token, carrier) = (fromQuery, .both)
        case (let fromQuery?, nil): (token, carrier) = (fromQuery, .query)
        case (nil, let fromHeader?): (token, carrier) = (fromHeader, .header)
        case (nil, nil): return Self.apiOAuthFailure(.invalidToken(Self.invalidTokenDescription), route: route)
        }
        guard let record = await state.authenticate(accessToken: token) else {
            return Self.apiOAuthFailure(.invalidToken(Self.invalidTokenDescription), route: route)
        }
        return try await body(token, record, carrier)
    }

    private func echo(_ request: Request) async throws -> Response {
        try await withAccessToken(request, route: .echo) { _, _, carrier in
            var bodyBytes = 0
            for try await buffer in request.body { bodyBytes += buffer.readableBytes }
            return Self.apiResponse(
                object: "Echo",
                route: .echo,
                data: .object([
                    "method": .string(request.method.rawValue),
                    "path": .string(request.uri.path),
                    "query": .string(Self.removingOAuthToken(from: request.uri.query ?? "")),
                    "body_bytes": .number(Double(bodyBytes)),
                    "token_via": .string(carrier.rawValue),
                ])
            )
        }
    }

    /// The raw query without its `oauth_token` parameters; the rest is kept as sent.
    static func removingOAuthToken(from query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: true).filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            return formDecoded(String(name)) != "oauth_token"
        }
        .joined(separator: "&")
    }

    /// `/api/2/me` data for an account (a subset of SPiD's User object).
    func user(_ email: String) -> JSONValue {
        let account = configuration.users[email]
        let local = email.split(separator: "@").first.map(String.init) ?? email
        let givenName = account?.givenName ?? (local.prefix(1).uppercased() + local.dropFirst())
        let familyName = account?.familyName ?? ""
        let formatted = [givenName, familyName].filter { !$0.isEmpty }.joined(separator: " ")
        return .object([
            "userId": .string(account?.userID ?? "0"),
            "email": .string(email),
            "emails": .array([.object(["value": .string(email), "primary": .bool(true)])]),
            "name": .object(["givenName": .string(givenName), "familyName": .string(familyName), "formatted": .string(formatted)]),
            "displayName": .string(formatted),
            "preferredUsername": .string(local),
            "emailVerified": .string("2014-05-09 10:40:12"),
        ])
    }
}
