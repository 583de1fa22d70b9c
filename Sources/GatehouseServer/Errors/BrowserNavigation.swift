import Foundation
import HTTPTypes
import Hummingbird

/// Which errors a person's browser is shown as a page (``ErrorPage``) rather than as problem+json.
///
/// A request gets the page when it is a top-level navigation and goes to a browser route:
///
/// - navigation: `Sec-Fetch-Mode: navigate`, or an `Accept` that prefers `text/html`; an `Accept` that lists
///   a JSON type (`application/json`, `application/problem+json`, `…+json`) always gets problem+json.
/// - browser routes: `/`, `/v1/sign-in`, `/v1/sign-out` (and below), `/v1/device` (the device page), `/v1/auth/{p}/login` and
///   `/v1/auth/{p}/pages` without `redirect_uri` (a native client's start wants its problem),
///   `/v1/auth/{p}/callback`, and `/v1/pages/**`. Every other route (`/v1/api/**`, `/v1/authz`,
///   `/v1/session`, …) answers problem+json whatever it is asked.
enum BrowserNavigation {
    /// Whether an error answered to `request` is the HTML error page.
    static func wantsPage(_ request: Request) -> Bool {
        guard isNavigation(request.headers) else { return false }
        return isBrowserRoute(path: request.uri.path, hasRedirectURI: request.uri.queryParameters["redirect_uri"] != nil)
    }

    /// The page's heading for a browser route.
    static func title(path: String) -> String {
        path.hasPrefix("/v1/sign-out") ? "Sign-out failed" : "Sign-in failed"
    }

    /// `Sec-Fetch-Mode: navigate`, or an `Accept` that prefers `text/html` and lists no JSON type.
    static func isNavigation(_ headers: HTTPFields) -> Bool {
        let ranges = headers[values: .accept].flatMap { $0.split(separator: ",") }.compactMap(mediaRange)
        if ranges.contains(where: isJSON) { return false }
        if headers[HTTPField.Name("Sec-Fetch-Mode")!]?.lowercased() == "navigate" { return true }
        guard let html = ranges.first(where: { $0.type == "text/html" }), html.quality > 0 else { return false }
        return ranges.allSatisfy { $0.quality <= html.quality }
    }

    /// Whether `path` is one a person's browser opens (see the type's description).
    static func isBrowserRoute(path: String, hasRedirectURI: Bool) -> Bool {
        if path == "/" || path == "/v1/sign-in" || path == "/v1/sign-out" || path.hasPrefix("/v1/sign-out/") || path == "/v1/device" { return true }
        if path.hasPrefix("/v1/pages/") { return true }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        // "", "v1", "auth", provider, step
        guard segments.count == 5, segments[1] == "v1", segments[2] == "auth", !segments[3].isEmpty else { return false }
        switch segments[4] {
        case "callback": return true
        case "login", "pages": return !hasRedirectURI
        default: return false
        }
    }

    /// One media range of an `Accept` header: its type (lowercased) and its `q` (1 when absent).
    private static func mediaRange(_ text: Substring) -> (type: String, quality: Double)? {
        let parts = text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let type = parts.first, !type.isEmpty else { return nil }
        let quality =
            parts.dropFirst().lazy.compactMap { parameter -> Double? in
                parameter.hasPrefix("q=") ? Double(parameter.dropFirst(2)) : nil
            }.first ?? 1
        return (type, quality)
    }

    /// A JSON media type the client accepts.
    private static func isJSON(_ range: (type: String, quality: Double)) -> Bool {
        range.quality > 0 && (range.type == "application/json" || range.type.hasSuffix("+json"))
    }
}
