import Crypto
import Foundation
import NIOHTTP1

/// The backend's side of a WebSocket opening handshake (RFC 6455 §4.2.2), as the relay checks it before it
/// joins two connections: a tunnel opens only on a `101` that switches to `websocket` and proves, with
/// `Sec-WebSocket-Accept`, that the backend read this client's `Sec-WebSocket-Key`. Any other `101` — a bare
/// one, `h2c`, an accept for another key — would leave a raw connection to the backend on which the client
/// writes requests that no rule judged and no identity header replaced.
enum WebSocketHandshake {
    /// RFC 6455 §1.3.
    private static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a client's key: base64(SHA-1(key + GUID)).
    static func accept(forKey key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key + guid).utf8))).base64EncodedString()
    }

    /// The accept value the backend must answer with, from the request the relay sends it; `nil` when that
    /// request does not carry exactly one key (no `101` can then be taken).
    static func expectedAccept(of request: HTTPRequestHead) -> String? {
        let keys = request.headers["sec-websocket-key"]
        guard keys.count == 1, let key = keys.first, !key.isEmpty else { return nil }
        return accept(forKey: String(ASCII.trimmed(Substring(key))))
    }

    /// Whether a `101` completes the handshake: one `Upgrade: websocket` and the one expected accept value.
    static func completes(_ response: HTTPResponseHead, expectedAccept: String?) -> Bool {
        guard response.status == .switchingProtocols, let expectedAccept else { return false }
        let upgrades = response.headers["upgrade"]
        let accepts = response.headers["sec-websocket-accept"]
        guard upgrades.count == 1, accepts.count == 1, let upgrade = upgrades.first, let accept = accepts.first else { return false }
        return ASCII.equalsIgnoringCase(ASCII.trimmed(Substring(upgrade)), "websocket") && ASCII.trimmed(Substring(accept)) == expectedAccept
    }
}
