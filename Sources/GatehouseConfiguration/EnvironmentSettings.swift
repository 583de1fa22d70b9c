import GatehouseCore

/// The keys of `gatehouse.yaml` that `GATEHOUSE_*` environment variables may set, and the warnings for a
/// `GATEHOUSE_*` variable that sets none.
///
/// Every scalar key and every list of strings has a variable: `GATEHOUSE_` and its path in upper snake case.
/// Lists of mappings (`keys.sealing`, `access.rules`) are written in the file only. ``EnvironmentOverlay`` puts the
/// variables' values into the parsed file before it is read, so the environment wins over the file.
///
/// When a reader gains a key, add it to ``all`` (the tests check that every entry is a key the reader knows, and
/// that every scalar and list key of `gatehouse.example.yaml` is here).
public enum EnvironmentSettings {
    /// What every setting's variable starts with.
    public static let prefix = "GATEHOUSE_"

    /// Every key an environment variable may set, in the order of the file's sections.
    public static let all: [EnvironmentSetting] = [
        .init("listen"),
        .init("public_url"),
        .init("providers_dir"),
        .init("data_dir"),
        .init("metrics_listen"),
        .init("store.kind"),
        .init("store.path"),
        .init("store.url"),
        .init("store.url_file"),
        .init("store.host"),
        .init("store.port"),
        .init("store.user"),
        .init("store.password"),
        .init("store.password_file"),
        .init("store.database"),
        .init("store.tls"),
        .init("store.pool_size"),
        .init("store.session_cache_seconds"),
        .init("sessions.idle_timeout_seconds"),
        .init("sessions.absolute_lifetime_seconds"),
        .init("sessions.cookie.name"),
        .init("sessions.cookie.secure"),
        .init("sessions.cookie.same_site"),
        .init("sessions.dpop.mode"),
        .init("sessions.dpop.max_age_seconds"),
        .init("sessions.dpop.require_nonce"),
        .init("sessions.dpop.nonce_lifetime_seconds"),
        .init("sessions.dpop.replay"),
        .init("refresh.skew_seconds"),
        .init("refresh.replay_limit_bytes"),
        .init("device.enabled"),
        .init("device.code_lifetime_seconds"),
        .init("device.interval_seconds"),
        .init("backend.url"),
        .init("backend.audience"),
        .init("backend.identity_headers"),
        .init("backend.assertion"),
        .init("backend.forward_access_token"),
        .init("backend.timeout_seconds"),
        .init("allowed_redirect_uris", .list),
        .init("cors.allowed_origins", .list),
        .init("trusted_proxies", .list),
        .init("access.default"),
        .init("access.return_to_origins", .list),
        .init("limits.max_body_bytes"),
        .init("limits.max_header_bytes"),
        .init("limits.upstream_timeout_seconds"),
        .init("limits.page_logins"),
        .init("limits.page_logins_per_client"),
        .init("limits.client_idle_timeout_seconds"),
        .init("limits.upstream_keepalive_seconds"),
        .init("limits.upstream_idle_connections"),
        .init("limits.client_body_timeout_seconds"),
        .init("limits.max_connections_per_client"),
        .init("limits.client_send_timeout_seconds"),
        .init("logging.level"),
        .init("logging.format"),
        .init("logging.access_log"),
        .init("tracing.otlp_endpoint"),
        .init("tracing.sample_ratio"),
        .init("tracing.service_name"),
        .init("tls.certificate_file"),
        .init("tls.private_key_file"),
        .init("tls.min_version"),
        .init("tls.http2"),
        .init("tls.hsts_seconds"),
        .init("redirect_http_listen"),
    ]

    /// Sections and lists of mappings: written in the file only. A variable named after one is told so.
    public static let fileOnly: [String] = [
        "store", "sessions", "sessions.cookie", "sessions.dpop", "refresh", "device", "keys", "keys.sealing", "keys.signing",
        "backend", "cors", "access", "access.login", "access.rules", "limits", "logging", "tracing", "upstreams", "tls",
    ]

    /// `GATEHOUSE_*` variables that are not settings and are never warned about: read by the tests and scripts
    /// around the binary (`GATEHOUSE_BIN`, `GATEHOUSE_URL`), by the container's health check
    /// (`deploy/healthcheck.sh`), and `GATEHOUSE_DATABASE_URL`, which the example files reference as
    /// `${GATEHOUSE_DATABASE_URL}`. Besides these, a name referenced as `${NAME}` in the loaded `gatehouse.yaml`
    /// or in a provider file is never warned about either.
    public static let notSettings: Set<String> = [
        "GATEHOUSE_BIN", "GATEHOUSE_URL", "GATEHOUSE_DATABASE_URL", "GATEHOUSE_HEALTH_ADDRESS", "GATEHOUSE_HEALTH_PATH",
    ]

    /// Prefixes of `GATEHOUSE_*` variables that are not settings (the test suites' own switches).
    public static let notSettingPrefixes: [String] = ["GATEHOUSE_TEST_", "GATEHOUSE_CLI_TEST_"]

    /// The setting a variable sets, if any.
    /// - Parameter variable: a variable's name, e.g. `GATEHOUSE_STORE_KIND`.
    public static func setting(named variable: String) -> EnvironmentSetting? {
        byVariable[variable]
    }

    /// One warning per `GATEHOUSE_*` variable that is no setting, in name order, each with the setting it most
    /// likely meant: `GATEHOUSE_STORE_KINDD is not a setting; did you mean GATEHOUSE_STORE_KIND (store.kind)?`.
    /// Only names are printed, never values (one may be a secret).
    /// - Parameters:
    ///   - environment: the process's environment.
    ///   - referenced: names the loaded files reference as `${NAME}`: not warned about.
    public static func warnings(environment: [String: String], referenced: Set<String> = []) -> [String] {
        environment.keys
            .filter { $0.hasPrefix(prefix) && byVariable[$0] == nil && !isIgnored($0) && !referenced.contains($0) }
            .sorted()
            .map(warning)
    }

    // MARK: Private

    private static let byVariable: [String: EnvironmentSetting] = Dictionary(
        all.map { ($0.variable, $0) }, uniquingKeysWith: { first, _ in first })

    private static func isIgnored(_ name: String) -> Bool {
        notSettings.contains(name) || notSettingPrefixes.contains { name.hasPrefix($0) }
    }

    private static func warning(for name: String) -> String {
        if let path = fileOnly.first(where: { EnvironmentSetting.variable(for: $0) == name }) {
            return "\(name) is not a setting: '\(path)' is written in the file only (the environment sets single values and lists of strings)"
        }
        let suffix = String(name.dropFirst(prefix.count))
        let suffixes = all.map { String($0.variable.dropFirst(prefix.count)) }
        // A typo, or a name cut short of its unit (GATEHOUSE_SESSIONS_IDLE_TIMEOUT for …_SECONDS) when only one fits.
        let longer = all.filter { $0.variable.hasPrefix(name + "_") }
        let near = KeySuggestion.closest(to: suffix, among: suffixes).flatMap { byVariable[prefix + $0] } ?? (longer.count == 1 ? longer[0] : nil)
        if let setting = near {
            return "\(name) is not a setting; did you mean \(setting.variable) (\(setting.path))?"
        }
        return "\(name) is not a setting (a setting is \(prefix) and a key's path in upper snake case, e.g. GATEHOUSE_STORE_KIND for store.kind)"
    }
}
