import GatehouseCore
import HTTPTypes
import Hummingbird

extension StandInSPiDServer {
    /// What `debug.route` of the envelope names: the endpoint that answered.
    struct APIRoute: Sendable {
        var name: String
        var url: String
        var controller: String

        static let me = APIRoute(name: "Get the logged in user", url: "/api/2/me", controller: "Api/2/User.me")
        static let logout = APIRoute(name: "Logout", url: "/api/2/logout", controller: "Api/2/Logout.logout")
        static let echo = APIRoute(name: "Echo (stand-in)", url: "/api/2/echo/{path}", controller: "Api/2/Echo.echo")
        static let unknown = APIRoute(name: "Unknown", url: "/api/2/{path}", controller: "Api/2/Error.notFound")
    }

    /// The "SPP Container" every API response comes in.
    static func envelope(
        object: String,
        type: String = "element",
        status: HTTPResponse.Status = .ok,
        route: APIRoute,
        data: JSONValue,
        error: JSONValue = .null
    ) -> [String: JSONValue] {
        [
            "name": .string("SPP Container"),
            "version": .string("0.2"),
            "api": .number(2),
            "object": .string(object),
            "type": .string(type),
            "code": .number(Double(status.code)),
            "request": .object(["reset": .number(3600), "limit": .number(1000), "remaining": .number(999)]),
            "debug": .object([
                "route": .object(["name": .string(route.name), "url": .string(route.url), "controller": .string(route.controller)]),
                "params": .object(["options": .array([]), "where": .array([])]),
            ]),
            "meta": .null,
            "error": error,
            "data": data,
        ]
    }

    /// A successful API answer.
    static func apiResponse(object: String, route: APIRoute, data: JSONValue) -> Response {
        .json(envelope(object: object, route: route, data: data), headers: [.cacheControl: "no-store"])
    }

    /// An API failure in the envelope's own form: `error` = `{code, type, description}`, `data` null.
    static func apiFailure(status: HTTPResponse.Status, type: String, description: String, route: APIRoute, headers: HTTPFields = [:]) -> Response {
        let error: JSONValue = .object([
            "code": .number(Double(status.code)),
            "type": .string(type),
            "description": .string(description),
        ])
        return .json(envelope(object: "Error", status: status, route: route, data: .null, error: error), status: status, headers: headers)
    }

    /// An OAuth failure at the API (bad, expired or logged-out token; ambiguous credentials): the envelope
    /// with SPiD's flat OAuth error members on top, so `error` is the code string (`invalid_token`) and
    /// `type` is `OAuthException`, as SDKs read it (`error`/`error_code`/`error_description`).
    static func apiOAuthFailure(_ error: OAuthError, route: APIRoute) -> Response {
        var body = envelope(object: "Error", status: error.status, route: route, data: .null)
        body.merge(spidErrorBody(error)) { _, flat in flat }
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if error.status == .unauthorized {
            headers[.wwwAuthenticate] = #"Bearer realm="Service", error="\#(error.code)""#
        }
        return .json(body, status: error.status, headers: headers)
    }

    /// SPiD's OAuth error body: `{"error", "error_code", "type": "OAuthException", "error_description"}`.
    static func spidErrorBody(_ error: OAuthError) -> [String: JSONValue] {
        [
            "error": .string(error.code),
            "error_code": .number(Double(error.status.code)),
            "type": .string("OAuthException"),
            "error_description": .string(error.description),
        ]
    }

    /// A token endpoint failure; `invalid_client` also gets a Basic challenge.
    static func tokenFailure(_ error: OAuthError) -> Response {
        var headers: HTTPFields = [.cacheControl: "no-store", .pragma: "no-cache"]
        if error.code == "invalid_client" {
            headers[.wwwAuthenticate] = #"Basic realm="SPiD""#
        }
        return .json(spidErrorBody(error), status: error.status, headers: headers)
    }

    /// The description SPiD gives for a token the API does not accept.
    static let invalidTokenDescription = #"401 Unauthorized access! Reason: "invalid_token" (OAuth realm: "Service", Scope: "")"#

    /// What the token endpoint and the API answer while switched to unavailable.
    static let unavailableDescription = "the stand-in is switched off"
}
