import Foundation
import GatehouseCore

/// Where support documents come from: pinned ones from the provider file first, then (when allowed)
/// `https://<domain>/.well-known/browserid` through the provider's transport, with a timeout, cached.
actor BrowserIDSupportDocuments {
    /// The result of looking a domain up.
    enum Lookup: Sendable, Equatable {
        case found(BrowserIDSupportDocument)
        /// No usable document (404, not JSON, fetching turned off, …): the reason.
        case absent(String)
    }

    /// The end of a domain's delegation chain.
    enum Authority: Sendable, Equatable {
        /// `domain` holds the keys.
        case authoritative(domain: String, keys: [BrowserIDPublicKey])
        /// The domain has no IdP (no document, disabled, a cycle, too deep): the reason.
        case none(String)
    }

    /// Delegations followed at most (browserid-local-verify's limit).
    static let maximumDelegations = 5
    /// How long a fetched document is kept (PyBrowserID: one hour).
    static let cacheLifetime: TimeInterval = 3600
    /// How long a missing document is remembered, so that unknown domains are not fetched on every post.
    static let negativeCacheLifetime: TimeInterval = 300
    static let maximumCacheEntries = 1024

    private let pinned: [String: BrowserIDSupportDocument]
    private let fetching: Bool
    private let http: ProviderHTTP
    private let clock: TimeSource
    private let url: @Sendable (String) -> String
    private var cache: [String: (lookup: Lookup, expires: Date)] = [:]

    /// - Parameters:
    ///   - url: the document URL of a domain; `https://<domain>/.well-known/browserid` outside tests.
    init(
        pinned: [String: BrowserIDSupportDocument], fetching: Bool, transport: any HTTPTransport, clock: TimeSource,
        timeout: Duration = .seconds(10), url: @escaping @Sendable (String) -> String = { "https://\($0)/.well-known/browserid" }
    ) {
        self.pinned = pinned
        self.fetching = fetching
        self.http = ProviderHTTP(transport: transport, timeout: timeout)
        self.clock = clock
        self.url = url
    }

    /// Follows `authority` delegation from `domain` to the domain that holds the keys.
    /// Throws ``ProviderError/unavailable(_:)`` when a document cannot be fetched right now.
    func authority(of domain: String) async throws -> Authority {
        var chain = [domain]
        var current = domain
        while true {
            switch try await lookup(current) {
            case .absent(let reason):
                return .none(reason)
            case .found(.disabled):
                return .none("'\(current)' has disabled BrowserID")
            case .found(.keys(let keys)):
                return .authoritative(domain: current, keys: keys)
            case .found(.delegated(let next)):
                if chain.contains(next) {
                    return .none("the delegation of '\(domain)' loops (\((chain + [next]).joined(separator: " -> ")))")
                }
                guard chain.count <= Self.maximumDelegations else {
                    return .none("the delegation of '\(domain)' is deeper than \(Self.maximumDelegations)")
                }
                chain.append(next)
                current = next
            }
        }
    }

    /// One domain's document: pinned, cached or fetched.
    func lookup(_ domain: String) async throws -> Lookup {
        if let document = pinned[domain] { return .found(document) }
        guard fetching else { return .absent("no support document is pinned for '\(domain)' and fetching is off") }
        let now = clock.now()
        if let entry = cache[domain], entry.expires > now { return entry.lookup }
        let lookup = try await fetch(domain)
        if cache.count >= Self.maximumCacheEntries {
            cache = cache.filter { $0.value.expires > now }
            if cache.count >= Self.maximumCacheEntries { cache.removeAll() }
        }
        let lifetime = if case .found = lookup { Self.cacheLifetime } else { Self.negativeCacheLifetime }
        cache[domain] = (lookup, now.addingTimeInterval(lifetime))
        return lookup
    }

    private func fetch(_ domain: String) async throws -> Lookup {
        let response = try await http.send(
            ProviderHTTP.jsonRequest(url(domain)), unreachable: "the support document of '\(domain)' could not be fetched",
            serverError: { "the support document of '\(domain)' answered \($0)" })
        guard response.status == 200 else { return .absent("'\(domain)' has no support document (HTTP \(response.status))") }
        do {
            return .found(try BrowserIDSupportDocument(data: response.body, source: "support document of '\(domain)'"))
        } catch {
            return .absent(error.reason)
        }
    }
}
