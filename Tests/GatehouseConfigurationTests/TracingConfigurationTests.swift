import GatehouseConfiguration
import GatehouseCore
import Testing

/// `tracing:`: the keys, the `GATEHOUSE_TRACING_*` variables, the standard `OTEL_*` ones where the gateway's own are
/// not set, and every bad value at its line.
struct TracingConfigurationTests {
    static func parse(_ yaml: String, environment: [String: String] = [:]) throws -> GatewayConfiguration.Tracing {
        try GatewayConfiguration.parse(yaml, file: "/tmp/gatehouse.yaml", environment: environment).tracing
    }

    @Test func offByDefaultAndWhileTheEndpointIsEmpty() throws {
        let tracing = try Self.parse("store: {kind: \"memory\"}\n")
        #expect(tracing == .init())
        #expect(!tracing.isEnabled)
        #expect(tracing.sampleRatio == 0.01)
        #expect(tracing.serviceName == "gatehouse")
        #expect(try !Self.parse("tracing: {otlp_endpoint: \"\"}\n").isEnabled)
    }

    @Test func readsTheKeys() throws {
        let tracing = try Self.parse(
            """
            tracing:
              otlp_endpoint: "http://collector:4318/"
              sample_ratio: 0.25
              service_name: "edge-gateway"
            """)
        #expect(tracing.otlpEndpoint == "http://collector:4318")
        #expect(tracing.tracesURL == "http://collector:4318/v1/traces")
        #expect(tracing.sampleRatio == 0.25)
        #expect(tracing.serviceName == "edge-gateway")
        #expect(try Self.parse("tracing: {otlp_endpoint: \"http://c:4318\", sample_ratio: 1}\n").sampleRatio == 1)
    }

    @Test func theGatewaysVariablesSetTheKeys() throws {
        let tracing = try Self.parse(
            "tracing: {otlp_endpoint: \"http://file:4318\"}\n",
            environment: [
                "GATEHOUSE_TRACING_OTLP_ENDPOINT": "https://env:4318", "GATEHOUSE_TRACING_SAMPLE_RATIO": "0.5",
                "GATEHOUSE_TRACING_SERVICE_NAME": "from-env",
            ])
        #expect(tracing == .init(otlpEndpoint: "https://env:4318", sampleRatio: 0.5, serviceName: "from-env"))
    }

    @Test func theStandardVariablesFillInWhatTheGatewaysKeysLeaveUnset() throws {
        let standard = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318", "OTEL_SERVICE_NAME": "otel-name"]
        #expect(try Self.parse("{}\n", environment: standard) == .init(otlpEndpoint: "http://otel:4318", serviceName: "otel-name"))
        // The gateway's own keys win, and an empty endpoint written in the file is off.
        let own = try Self.parse("tracing: {otlp_endpoint: \"http://own:4318\", service_name: \"own\"}\n", environment: standard)
        #expect(own == .init(otlpEndpoint: "http://own:4318", serviceName: "own"))
        #expect(try !Self.parse("tracing: {otlp_endpoint: \"\"}\n", environment: standard).isEnabled)
        #expect(
            try Self.parse("{}\n", environment: standard.merging(["GATEHOUSE_TRACING_OTLP_ENDPOINT": "http://gh:4318"]) { $1 }).otlpEndpoint
                == "http://gh:4318")
    }

    @Test func everyBadValueIsReportedAtItsLine() {
        let errors = Fixtures.parseErrors(
            """
            tracing:
              otlp_endpoint: "collector:4318"
              sample_ratio: 1.5
              service_name: ""
              sampler: "always"
            """)
        #expect(errors.count == 4, "\(errors)")
        #expect(errors.contains { $0.hasPrefix("/tmp/gatehouse.yaml:2: 'tracing.otlp_endpoint' must be an absolute http(s) URL") })
        #expect(errors.contains { $0.hasPrefix("/tmp/gatehouse.yaml:3: 'tracing.sample_ratio' must be between 0") })
        #expect(errors.contains { $0.hasPrefix("/tmp/gatehouse.yaml:4: 'tracing.service_name' must not be empty") })
        #expect(errors.contains { $0.hasPrefix("/tmp/gatehouse.yaml:5:") && $0.contains("sampler") })
        #expect(Fixtures.parseErrors("tracing: {sample_ratio: \"often\"}\n").contains { $0.contains("'tracing.sample_ratio' must be a number") })
        #expect(
            Fixtures.parseErrors("{}\n", environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "collector"]) == [
                "OTEL_EXPORTER_OTLP_ENDPOINT:0: OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http(s) URL, not 'collector'"
            ])
    }
}
