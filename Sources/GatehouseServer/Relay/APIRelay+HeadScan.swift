import NIOHTTP1

extension APIRelay {
    /// One pass over a request head's fields: everything the claim of `/v1/api` (``APIRelay/claim(_:)``) and the
    /// relay's `/v1/authz` answer (``APIRelay/authorize(_:remoteAddress:memo:)``) read of them. Each of those
    /// judges the same facts its own way; neither scans the fields itself.
    struct HeadScan {
        /// `Host` fields.
        private(set) var hosts = 0
        /// The (first) `Host` value, kept only with `forwardAuth` (Envoy's check names the original host in it).
        private(set) var host: String?
        /// The fields' size as ``RequestHeadLimits`` counts it (name, value and 4 bytes of each).
        private(set) var fieldBytes = 0
        /// The `Authorization` value (several fields joined by `, `, as HTTP fields are read).
        private(set) var authorization: String?
        private(set) var contentLengths = 0
        /// A `Content-Length` that is not a non-negative number.
        private(set) var invalidContentLength = false
        /// A `Content-Length` other than `0`.
        private(set) var announcesBody = false
        private(set) var transferEncodings = 0
        /// A `Transfer-Encoding` other than `chunked` alone.
        private(set) var notOnlyChunked = false
        private(set) var expect = false
        private(set) var upgrades = 0
        /// The (last) `Upgrade` value is `websocket`.
        private(set) var websocket = false
        /// A `Connection` field lists `upgrade`.
        private(set) var connectionUpgrade = false
        private(set) var origins = 0
        /// The forward-auth fields (``ForwardAuthTarget/singleFields``) by lower-cased name; read only when asked.
        private(set) var forwardAuthFields: [String: String] = [:]
        /// The first forward-auth field sent twice.
        private(set) var repeatedForwardAuthField: String?

        /// Scans `headers`; `forwardAuth` also collects the forward-auth fields (only `/v1/authz` needs them).
        init(_ headers: HTTPHeaders, forwardAuth: Bool) {
            for (name, value) in headers {
                fieldBytes += name.utf8.count + value.utf8.count + 4
                switch name.utf8.count {
                case 4 where ASCII.equalsIgnoringCase(name, "host"):
                    hosts += 1
                    if forwardAuth, host == nil { host = value }
                case 13 where ASCII.equalsIgnoringCase(name, "authorization"):
                    authorization = authorization.map { $0 + ", " + value } ?? value
                case 14 where ASCII.equalsIgnoringCase(name, "content-length"):
                    contentLengths += 1
                    if value != "0" {
                        announcesBody = true
                        if Int(value).map({ $0 < 0 }) ?? true { invalidContentLength = true }
                    }
                case 17 where ASCII.equalsIgnoringCase(name, "transfer-encoding"):
                    transferEncodings += 1
                    if !ASCII.equalsIgnoringCase(value, "chunked") { notOnlyChunked = true }
                case 10 where ASCII.equalsIgnoringCase(name, "connection"):
                    connectionUpgrade = connectionUpgrade || Self.hasUpgradeToken(value)
                case 7 where ASCII.equalsIgnoringCase(name, "upgrade"):
                    upgrades += 1
                    websocket = ASCII.equalsIgnoringCase(ASCII.trimmed(Substring(value)), "websocket")
                case 6 where ASCII.equalsIgnoringCase(name, "expect"): expect = true
                case 6 where ASCII.equalsIgnoringCase(name, "origin"): origins += 1
                case 14...18 where forwardAuth:
                    let lowered = ASCII.lowercased(name)
                    guard ForwardAuthTarget.singleFields.contains(lowered) else { continue }
                    if forwardAuthFields.updateValue(value, forKey: lowered) != nil { repeatedForwardAuthField = repeatedForwardAuthField ?? name }
                default: break
                }
            }
        }

        /// Whether a `Connection` value lists `upgrade`.
        private static func hasUpgradeToken(_ value: String) -> Bool {
            value.split(separator: ",").contains { ASCII.equalsIgnoringCase(ASCII.trimmed($0), "upgrade") }
        }
    }
}
