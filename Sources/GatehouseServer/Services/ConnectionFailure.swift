import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// What failed when an outbound call (a provider, the backend, the CLI's gateway) could not be made, in a
/// person's words: what a problem's `detail`, `/readyz` and the CLI show. The library's own text (BoringSSL's
/// codes, NIO's `errno` and its source locations) goes only to the log line that carries the technical cause.
public enum ConnectionFailure {
    /// The words for `error`; "the connection failed" when nothing more precise is known.
    public static func words(_ error: any Error) -> String {
        known(error) ?? "the connection failed"
    }

    /// The words for `error` when it is one of the failures told apart here; `nil` for anything else.
    public static func known(_ error: any Error) -> String? {
        switch error {
        case let error as OutboundTLSError:
            return error.description
        case let error as NIOSSLError:
            if case .handshakeFailed = error {
                return certificateRefused(String(describing: error)) ?? "the TLS handshake failed"
            }
            return "the TLS connection failed"
        case is NIOSSLExtraError:
            let text = String(describing: error)
            return text.contains("Hostname") || text.contains("hostname")
                ? "the server's TLS certificate does not name its host" : "the TLS handshake failed"
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused"
            case EHOSTUNREACH, ENETUNREACH: return "no route to the host"
            case ETIMEDOUT: return "the connection timed out"
            case ECONNRESET: return "the connection was reset"
            default: break
            }
        case let error as HTTPClientError:
            switch error {
            case .connectTimeout: return "the connection timed out"
            case .deadlineExceeded, .readTimeout, .writeTimeout: return "no answer in time"
            case .remoteConnectionClosed: return "the server closed the connection"
            case .invalidURL, .emptyHost, .emptyScheme: return "the URL is not valid"
            default: break
            }
        case let error as ChannelError:
            if case .connectTimeout = error { return "the connection timed out" }
        case let error as NIOConnectionError:
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return "the host name could not be resolved"
            }
            if let first = error.connectionErrors.first { return known(first.error) }
        default:
            break
        }
        // Errors that wrap others (AsyncHTTPClient's, some of NIO's) are recognized by their text.
        let text = String(describing: error)
        if let refused = certificateRefused(text) { return refused }
        if text.contains("Connection refused") { return "connection refused" }
        if text.contains("dnsAError") || text.contains("NXDOMAIN") || text.contains("Name or service not known") {
            return "the host name could not be resolved"
        }
        return nil
    }

    /// A TLS handshake refused because of the server's certificate, from BoringSSL's text.
    private static func certificateRefused(_ text: String) -> String? {
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
            return "the server's TLS certificate is not trusted"
        }
        if text.contains("failedToValidateHostname") || text.contains("HOSTNAME_MISMATCH") {
            return "the server's TLS certificate does not name its host"
        }
        return nil
    }
}
