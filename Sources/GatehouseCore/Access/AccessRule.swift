/// One rule of `access.rules`: the first rule whose paths and methods match a request decides it.
public struct AccessRule: Sendable, Equatable {
    /// Who a rule lets through.
    public enum Allow: Sendable, Equatable {
        /// Everyone, with or without a session.
        case anyone
        /// Any session.
        case authenticated
        /// A session meeting ANY of the conditions.
        case conditions([AccessCondition])
    }

    public var name: String
    public var paths: [PathPattern]
    /// Upper case; `nil` is every method. A list with `GET` also holds `HEAD`: a `HEAD` runs the backend's
    /// `GET` handler (RFC 9110 §9.3.2), so a rule about `GET` is a rule about both.
    public var methods: Set<String>?
    public var allow: Allow
    /// `hosts:`; `nil` is every host. A rule with hosts never applies to a request without one it lists.
    public var hosts: [HostPattern]?
    /// `require:`: a session it lets through must also have authenticated this strongly or this recently.
    public var require: StepUpRequirement?

    public init(
        name: String, paths: [PathPattern], methods: Set<String>? = nil, hosts: [HostPattern]? = nil, allow: Allow,
        require: StepUpRequirement? = nil
    ) {
        self.name = name
        self.paths = paths
        self.methods = methods.map { $0.contains("GET") ? $0.union(["HEAD"]) : $0 }
        self.hosts = hosts
        self.allow = allow
        self.require = require
    }

    /// Whether the rule is the one for this request; `host` as ``HostPattern/normalized(_:)`` gives it.
    public func applies(method: String, path: [Substring], host: String? = nil) -> Bool {
        if let methods, !methods.contains(method) { return false }
        if let hosts {
            guard let host, hosts.contains(where: { $0.matches(host) }) else { return false }
        }
        return paths.contains { $0.matches(path) }
    }
}
