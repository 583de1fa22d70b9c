import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

/// The pages of `/v1/device`: typing the code, confirming what asks, and the end ("return to your terminal").
/// No script; not framable (a confirm button under someone else's page, ``PageFraming``).
enum DevicePages {
    struct ProviderChoice: Sendable {
        var id: String
        var name: String
    }

    /// The form where the person types the code; `message` says why the last code was not taken.
    static func entry(message: String? = nil, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let note = message.map { #"<p class="error" role="alert">\#(HTMLEscaping.escape($0))</p>"# } ?? ""
        return page(
            title: "Sign in a device",
            body: """
                <h1>Sign in a device</h1><p>Type the code your terminal shows.</p>\(note)\
                <form method="get" action="/v1/device"><label>Code <input name="user_code" autocomplete="off" autocapitalize="characters" \
                spellcheck="false" maxlength="16" placeholder="XXXX-XXXX" required autofocus></label> \
                <button type="submit">Continue</button></form>
                """, status: status, headers: headers)
    }

    /// What asks, and the buttons: one per provider to sign in with (approve), and deny.
    static func confirmation(
        userCode: String, authorization: DeviceAuthorization, providers: [ProviderChoice], csrf: String, headers: HTTPFields
    ) -> Response {
        let asked = RFC3339.string(authorization.requestedAt)
        let hidden = """
            <input type="hidden" name="user_code" value="\(HTMLEscaping.escape(userCode))">\
            <input type="hidden" name="csrf" value="\(HTMLEscaping.escape(csrf))">
            """
        let buttons = providers.map { choice in
            #"<button type="submit" name="provider" value="\#(HTMLEscaping.escape(choice.id))">Sign in with \#(HTMLEscaping.escape(choice.name))</button> "#
        }.joined()
        return page(
            title: "Confirm the device",
            body: """
                <h1>Confirm the device</h1>\
                <p>A device asks to sign in as you with the code <strong id="user-code">\(HTMLEscaping.escape(userCode))</strong>.</p>\
                <dl><dt>Asked from</dt><dd id="client-address">\(HTMLEscaping.escape(authorization.clientAddress))</dd>\
                <dt>Asked at</dt><dd id="requested-at">\(HTMLEscaping.escape(asked))</dd></dl>\
                <p>Continue only if you started this sign-in yourself, on a device you trust.</p>\
                <form method="post" action="/v1/device">\(hidden)<input type="hidden" name="action" value="approve">\(buttons)</form>\
                <form method="post" action="/v1/device">\(hidden)<input type="hidden" name="action" value="deny">\
                <button type="submit" id="deny">Deny</button></form>
                """, status: .ok, headers: headers)
    }

    /// The end of a browser login made for a device: its session goes to the device, not to this browser.
    static func signedIn(headers: HTTPFields = [:]) -> Response {
        done(
            title: "Device signed in", message: "You are signed in on the device. Return to your terminal; you can close this page.", headers: headers
        )
    }

    /// The end of the browser's part.
    static func done(title: String, message: String, headers: HTTPFields = [:]) -> Response {
        page(
            title: title, body: "<h1>\(HTMLEscaping.escape(title))</h1><p id=\"device-done\">\(HTMLEscaping.escape(message))</p>", status: .ok,
            headers: headers)
    }

    private static func page(title: String, body: String, status: HTTPResponse.Status, headers: HTTPFields) -> Response {
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>\(HTMLEscaping.escape(title))</title>\
            <meta name="viewport" content="width=device-width, initial-scale=1">\
            <style>body{font-family:system-ui,sans-serif;max-width:40em;margin:2em auto}.error{color:#a00}</style></head><body>\
            \(body)</body></html>
            """
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.cacheControl] = "no-store"
        // No `form-action`: browsers apply it to the redirect on to the provider as well.
        fields[PageFraming.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'"
        return Response(status: status, headers: PageFraming.denying(fields), body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
