import GatehouseCore

extension GatewayConfiguration {
    /// `tracing:` — OpenTelemetry spans exported over OTLP/HTTP; off while ``otlpEndpoint`` is nil.
    public struct Tracing: Sendable, Equatable {
        /// The standard variable read when `tracing.otlp_endpoint` (or `GATEHOUSE_TRACING_OTLP_ENDPOINT`) is not set.
        public static let standardEndpointVariable = "OTEL_EXPORTER_OTLP_ENDPOINT"
        /// The standard variable read when `tracing.service_name` (or `GATEHOUSE_TRACING_SERVICE_NAME`) is not set.
        public static let standardServiceNameVariable = "OTEL_SERVICE_NAME"

        /// The collector's OTLP/HTTP base URL (spans go to `/v1/traces` under it); nil: tracing is off.
        public var otlpEndpoint: String?
        /// The share of new traces recorded, 0 to 1; a client's sampled `traceparent` is followed whatever it is.
        public var sampleRatio: Double
        /// The `service.name` of the exported spans.
        public var serviceName: String

        /// Whether spans are made and exported.
        public var isEnabled: Bool { otlpEndpoint != nil }

        /// - Parameters:
        ///   - otlpEndpoint: nil (off) by default.
        ///   - sampleRatio: 0.01 by default.
        ///   - serviceName: `gatehouse` by default.
        public init(otlpEndpoint: String? = nil, sampleRatio: Double = 0.01, serviceName: String = "gatehouse") {
            self.otlpEndpoint = otlpEndpoint
            self.sampleRatio = sampleRatio
            self.serviceName = serviceName
        }

        /// Reads `tracing:`; the standard `OTEL_*` variables fill in what the gateway's own keys leave unset.
        init(_ map: ConfigMap, environment: [String: String]) throws {
            self.init()
            // Written, even empty (off): the standard variable is not read.
            if let text = try map.string("otlp_endpoint") {
                if !text.isEmpty { otlpEndpoint = try map.url("otlp_endpoint").map(Self.trimmingSlash) }
            } else if !map.hasProblem("otlp_endpoint"), let text = environment[Self.standardEndpointVariable], !text.isEmpty {
                guard Self.isHTTPURL(text) else {
                    throw ConfigError(
                        variable: Self.standardEndpointVariable,
                        message: "\(Self.standardEndpointVariable) must be an absolute http(s) URL, not '\(text)'")
                }
                otlpEndpoint = Self.trimmingSlash(text)
            }
            sampleRatio = try map.number("sample_ratio", range: 0...1) ?? sampleRatio
            if let name = try map.string("service_name") {
                if name.isEmpty {
                    try map.report("service_name", "'tracing.service_name' must not be empty")
                } else {
                    serviceName = name
                }
            } else if let name = environment[Self.standardServiceNameVariable], !name.isEmpty {
                serviceName = name
            }
            try map.finish()
        }

        /// The URL the spans are posted to.
        public var tracesURL: String? {
            otlpEndpoint.map { $0 + "/v1/traces" }
        }

        private static func trimmingSlash(_ url: String) -> String {
            var url = Substring(url)
            while url.hasSuffix("/") { url = url.dropLast() }
            return String(url)
        }

        private static func isHTTPURL(_ text: String) -> Bool {
            let lowered = text.lowercased()
            return (lowered.hasPrefix("http://") || lowered.hasPrefix("https://")) && text.count > "https://".count
        }
    }
}
