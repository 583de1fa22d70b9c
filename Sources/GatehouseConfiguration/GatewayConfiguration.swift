public import Foundation
public import GatehouseCore

/// Everything in `gatehouse.yaml`, with a default for every key that works on one machine.
///
/// ```swift
/// var configuration = try GatewayConfiguration.load(path: options.config)
/// if let listen = options.listen { try configuration.overrideListen(listen) }
/// ```
public struct GatewayConfiguration: Sendable, Equatable {
    /// `listen`: where the gateway accepts connections.
    public var listen: ListenAddress
    /// `public_url`: the externally visible base URL, without trailing slash; issuer of assertions and base of
    /// callback URLs.
    public var publicURL: String
    /// Whether `public_url` was written in the file; when not, it follows ``listen`` (also `serve --listen`).
    public var publicURLIsExplicit = false
    /// `providers_dir`: the directory of `Providers/*.yaml` (absolute once loaded).
    public var providersDirectory: String
    /// `data_dir`: where keys are generated when `keys` names none, and where the default SQLite store lives
    /// (absolute once loaded).
    public var dataDirectory: String
    /// Where ``dataDirectory`` was set: its line, its variable (`GATEHOUSE_DATA_DIR`), or, for the default, the top
    /// of the file (`data_dir` when there is no file).
    public var dataDirectoryLocation = ConfigLocation(file: "data_dir", line: 0)
    /// Where `store.path` was set; when it is not, the SQLite store is in the data directory (``dataDirectoryLocation``).
    public var storePathLocation = ConfigLocation(file: "data_dir", line: 0)
    public var store: Store
    public var sessions: Sessions
    public var refresh: Refresh
    /// `device:` — device sign-in (`/v1/device/…`).
    public var device = Device()
    public var keys: Keys
    public var backend: Backend
    /// `upstreams:` — named upstreams chosen by path prefix under `/v1/api`, besides `backend`.
    public var upstreams: [Upstream] = []
    /// `forward_auth.apps:` — applications behind the operator's own proxy, told apart by host on `/v1/authz`.
    public var forwardAuthApps: [ForwardAuthApp] = []
    /// `allowed_redirect_uris`: client redirect URIs allowed for every provider.
    public var allowedRedirectURIs: [String]
    public var cors: CORS
    /// `metrics_listen:` — where `/metrics` is served instead of on the public listener; nil: on the public one.
    public var metricsListen: ListenAddress?
    /// `trusted_proxies:` — peers whose `X-Forwarded-*` headers are kept (and appended to).
    public var trustedProxies: TrustedProxies = .none
    /// `access:`; without one every signed-in user reaches the whole backend.
    public var access: AccessPolicy
    public var limits: Limits
    public var logging: Logging
    /// `tracing:` — OpenTelemetry spans over OTLP/HTTP; off by default.
    public var tracing = Tracing()
    /// `tls:` — HTTPS (and HTTP/2) on ``listen``; nil: plain HTTP.
    public var tls: TLS?
    /// `outbound_tls:` — the certificate authorities every outbound call trusts.
    public var outboundTLS = OutboundTLS()
    /// `redirect_http_listen:` — a plain HTTP listener answering 308 to ``publicURL`` (needs ``tls``).
    public var redirectHTTPListen: ListenAddress?
    /// The file the settings came from; nil when there is none (defaults and the environment).
    public var file: String?
    /// The `GATEHOUSE_*` variables that set keys (``EnvironmentSettings``), in the order of the file's sections;
    /// names only: a value may be a secret.
    public var environmentVariables: [String] = []
    /// What is valid but most likely a mistake (`sessions.cookie.secure: false` behind an `https` `public_url`),
    /// each at the `file:line` (or variable) that set it; `gatehouse check` and `serve` print them as warnings.
    public var warnings: [ConfigError] = []
    /// The directory relative paths were resolved against: the file's directory, else the current directory.
    /// Generated keys and other state default to `data/` under it.
    public var baseDirectory: String

    /// The defaults of every key, with relative paths as written (``load(path:environment:)`` resolves them).
    public init(
        listen: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8080),
        publicURL: String = "http://127.0.0.1:8080",
        providersDirectory: String = "./Providers",
        dataDirectory: String = "./data",
        store: Store = Store(),
        sessions: Sessions = Sessions(),
        refresh: Refresh = Refresh(),
        keys: Keys = Keys(),
        backend: Backend = Backend(),
        allowedRedirectURIs: [String] = [],
        cors: CORS = CORS(),
        access: AccessPolicy = AccessPolicy(),
        limits: Limits = Limits(),
        logging: Logging = Logging(),
        file: String? = nil,
        baseDirectory: String = "."
    ) {
        self.listen = listen
        self.publicURL = publicURL
        self.providersDirectory = providersDirectory
        self.dataDirectory = dataDirectory
        self.store = store
        self.sessions = sessions
        self.refresh = refresh
        self.keys = keys
        self.backend = backend
        self.allowedRedirectURIs = allowedRedirectURIs
        self.cors = cors
        self.access = access
        self.limits = limits
        self.logging = logging
        self.file = file
        self.baseDirectory = baseDirectory
    }

    /// The host part of ``listen`` (IPv6 without brackets).
    public var listenHost: String { listen.host }
    /// The port part of ``listen``.
    public var listenPort: Int { listen.port }

    /// Replaces ``listen`` (`gatehouse serve --listen HOST:PORT`), so several instances can share one file.
    /// - Parameter address: `host:port`.
    /// - Throws: ``ListenAddressError`` when the text is not `host:port`.
    public mutating func overrideListen(_ address: String) throws {
        guard let parsed = ListenAddress(address) else { throw ListenAddressError(value: address) }
        listen = parsed
        if !publicURLIsExplicit { publicURL = Self.defaultPublicURL(for: parsed, secure: tls != nil) }
    }

    /// `http://{listen}` for a plain listen address (`https://` with `secure`); a wildcard listen address is
    /// reached over loopback.
    static func defaultPublicURL(for listen: ListenAddress, secure: Bool = false) -> String {
        let host: String
        switch listen.host {
        case "0.0.0.0": host = "127.0.0.1"
        case "::": host = "[::1]"
        default: host = listen.host.contains(":") ? "[\(listen.host)]" : listen.host
        }
        return "\(secure ? "https" : "http")://\(host):\(listen.port)"
    }

    /// The default configuration file, used when no path is given and it exists.
    public static let defaultFile = "gatehouse.yaml"

    /// Loads `gatehouse.yaml`, with the `GATEHOUSE_*` variables of ``EnvironmentSettings`` over it.
    /// - Parameters:
    ///   - path: the file; nil means `./gatehouse.yaml` when it exists, else the defaults (and the environment).
    ///   - environment: where `${VAR}` is looked up, and the `GATEHOUSE_*` settings, which win over the file.
    /// - Throws: ``ConfigurationErrors`` listing every problem found, each as `file:line: message`.
    public static func load(
        path: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> GatewayConfiguration {
        let (configuration, problems) = read(path: path, environment: environment)
        guard let configuration, problems.isEmpty else { throw ConfigurationErrors(problems) }
        return configuration
    }

    /// Reads `gatehouse.yaml` as ``load(path:environment:)`` does, without stopping at its problems: what
    /// `gatehouse check` needs to go on to the files the configuration names (keys, providers) in the same run.
    /// - Parameters:
    ///   - path: the file; nil means `./gatehouse.yaml` when it exists, else the defaults (and the environment).
    ///   - environment: where `${VAR}` is looked up, and the `GATEHOUSE_*` settings, which win over the file.
    /// - Returns: the configuration as far as it could be read (a section with a problem keeps what it read
    ///   before it, or its defaults), nil when the file cannot be read or is not YAML; and every problem, each at
    ///   its `file:line`, in line order.
    public static func read(
        path: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (configuration: GatewayConfiguration?, problems: [ConfigError]) {
        let file: String
        if let path {
            file = path
        } else if FileManager.default.fileExists(atPath: defaultFile) {
            file = defaultFile
        } else {
            return read(.emptyMapping(file: environmentName), file: nil, baseDirectory: ConfigPath.current, environment: environment)
        }
        let document: YAMLDocument
        do {
            document = try YAMLDocument(contentsOfFile: file)
        } catch {
            var errors = ErrorCollector()
            errors.record(error, file: file)
            return (nil, errors.errors)
        }
        return read(document.root, file: file, baseDirectory: ConfigPath.directory(of: file), environment: environment)
    }

    /// Reads settings from YAML text (a file's content), with the `GATEHOUSE_*` variables of
    /// ``EnvironmentSettings`` over it.
    /// - Parameters:
    ///   - text: the YAML.
    ///   - file: the name used in messages; relative paths resolve against its directory.
    ///   - environment: where `${VAR}` is looked up, and the `GATEHOUSE_*` settings, which win over the file.
    /// - Throws: ``ConfigurationErrors`` listing every problem found.
    public static func parse(
        _ text: String, file: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> GatewayConfiguration {
        let document: YAMLDocument
        do {
            document = try YAMLDocument(text: text, file: file)
        } catch {
            var errors = ErrorCollector()
            errors.record(error, file: file)
            throw ConfigurationErrors(errors.errors)
        }
        let (configuration, problems) = read(document.root, file: file, baseDirectory: ConfigPath.directory(of: file), environment: environment)
        guard let configuration, problems.isEmpty else { throw ConfigurationErrors(problems) }
        return configuration
    }

    /// All defaults, with relative paths resolved against `baseDirectory`.
    /// - Parameter baseDirectory: where `./Providers` and `./data` are.
    public static func defaults(baseDirectory: String) -> GatewayConfiguration {
        var configuration = GatewayConfiguration(baseDirectory: baseDirectory)
        configuration.providersDirectory = ConfigPath.resolve(configuration.providersDirectory, against: baseDirectory)
        configuration.dataDirectory = ConfigPath.resolve(configuration.dataDirectory, against: baseDirectory)
        configuration.store.path = Store.defaultPath(in: configuration.dataDirectory)
        return configuration
    }

    // MARK: Private

    /// Where a problem of the whole configuration is placed when there is no file.
    private static let environmentName = "environment"

    /// Reads a parsed file (an empty mapping when there is none) with the environment's settings over it: the
    /// configuration as far as it could be read (nil when the file is not a mapping), and every problem.
    private static func read(
        _ root: ConfigNode, file path: String?, baseDirectory: String, environment: [String: String]
    ) -> (configuration: GatewayConfiguration?, problems: [ConfigError]) {
        let file = path ?? environmentName
        var errors = ErrorCollector()
        var configuration = defaults(baseDirectory: baseDirectory)
        configuration.file = path
        let overlay = EnvironmentOverlay(root: root, environment: environment)
        configuration.environmentVariables = overlay.applied
        // Collecting: every section is read to its end and each problem recorded, so that one run reports them all
        // (``ConfigProblems`` drops what only follows from an earlier problem).
        let problems = ConfigProblems()
        for problem in overlay.problems { problems.record(problem.error, keys: [problem.key]) }
        guard
            let map = errors.attempt(
                file: file,
                {
                    try ConfigMap(overlay.root, environment: environment, baseDirectory: baseDirectory, problems: problems)
                })
        else { return (nil, errors.errors) }
        /// A section's own checks throw; what they throw joins the collected problems.
        func section(_ body: () throws -> Void) {
            do {
                try body()
            } catch let error as ConfigurationErrors {
                for error in error.errors { problems.absorb(error, file: file) }
            } catch {
                problems.absorb(error, file: file)
            }
        }

        section {
            if let text = try map.string("listen") {
                guard let address = ListenAddress(text) else {
                    throw map.error("listen", "'listen' must be host:port (e.g. 127.0.0.1:8080), not '\(text)'")
                }
                configuration.listen = address
            }
        }
        section {
            if let text = try map.string("metrics_listen") {
                guard let address = ListenAddress(text) else {
                    throw map.error("metrics_listen", "'metrics_listen' must be host:port (e.g. 127.0.0.1:9090), not '\(text)'")
                }
                configuration.metricsListen = address
            }
        }
        section {
            if let url = try map.baseURL("public_url") {
                configuration.publicURL = url
                configuration.publicURLIsExplicit = true
            }
        }
        section {
            if let directory = try map.nonEmptyString("providers_dir") {
                configuration.providersDirectory = ConfigPath.resolve(directory, against: baseDirectory)
            }
        }
        section {
            if let directory = try map.nonEmptyString("data_dir") {
                configuration.dataDirectory = ConfigPath.resolve(directory, against: baseDirectory)
            }
        }
        configuration.dataDirectoryLocation = location(of: ["data_dir"], in: overlay.root, file: path, default: "data_dir")
        section {
            configuration.store = try Store(map.mapOrEmpty("store"), baseDirectory: baseDirectory, dataDirectory: configuration.dataDirectory)
        }
        // Not written: the store is in the data directory, and moves with it.
        let storePath = location(of: ["store", "path"], in: overlay.root, file: nil, default: "")
        configuration.storePathLocation = storePath.file.isEmpty ? configuration.dataDirectoryLocation : storePath
        section { configuration.sessions = try Sessions(map.mapOrEmpty("sessions")) }
        section { configuration.refresh = try Refresh(map.mapOrEmpty("refresh")) }
        section { configuration.device = try Device(map.mapOrEmpty("device")) }
        section {
            configuration.keys = try Keys(map.mapOrEmpty("keys"), baseDirectory: baseDirectory)
        }
        section { configuration.backend = try Backend(map.mapOrEmpty("backend")) }
        section { configuration.upstreams = try upstreams(map, backend: configuration.backend) }
        section {
            let forwardAuth = try map.mapOrEmpty("forward_auth")
            configuration.forwardAuthApps = try forwardAuthApps(forwardAuth, backend: configuration.backend, upstreams: configuration.upstreams)
            try forwardAuth.finish()
        }
        section {
            configuration.allowedRedirectURIs = try map.redirectURIs("allowed_redirect_uris")
        }
        section { configuration.cors = try CORS(map.mapOrEmpty("cors")) }
        section {
            if let entries = try map.strings("trusted_proxies") {
                do {
                    configuration.trustedProxies = try TrustedProxies(entries)
                } catch let error as TrustedProxies.InvalidEntry {
                    throw map.error(
                        "trusted_proxies",
                        "'trusted_proxies' lists IP addresses and CIDR ranges (10.0.0.0/8, fd00::/8), not '\(error.entry)'")
                }
            }
        }
        section { configuration.access = try access(map.mapOrEmpty("access")) }
        section { configuration.limits = try Limits(map.mapOrEmpty("limits")) }
        section { configuration.logging = try Logging(map.mapOrEmpty("logging")) }
        section { configuration.tracing = try Tracing(map.mapOrEmpty("tracing"), environment: environment) }
        section { try readTLS(map, into: &configuration) }
        section { configuration.outboundTLS = try OutboundTLS(map.mapOrEmpty("outbound_tls")) }
        section { try checkPublicURL(map, configuration) }
        section { try map.finish() }

        for error in problems.errors { errors.append(error) }
        if !configuration.publicURLIsExplicit {
            configuration.publicURL = defaultPublicURL(for: configuration.listen, secure: configuration.tls != nil)
        }
        configuration.warnings = warnings(configuration, root: overlay.root)
        return (configuration, errors.sortedByLine())
    }
}
