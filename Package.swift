// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "gatehouse",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gatehouse", targets: ["gatehouse"]),
        .executable(name: "gatehouse-bench", targets: ["GatehouseBench"]),
        // For the fuzz targets in Fuzz/ (a package of its own: libFuzzer brings its own `main`).
        .library(name: "GatehouseCore", targets: ["GatehouseCore"]),
        .library(name: "GatehouseProviders", targets: ["GatehouseProviders"]),
        .library(name: "GatehouseConfiguration", targets: ["GatehouseConfiguration"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/attaswift/BigInt.git", from: "6.0.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // OTLP/HTTP only: the gRPC exporter's dependencies cost build time, binary size and idle memory.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-service-context.git", from: "1.5.1"),
        .package(url: "https://github.com/swift-otel/swift-w3c-trace-context.git", from: "1.0.0"),
    ],
    targets: [
        // The adapter protocol, session model and store protocol, errors, access rules, configuration nodes.
        // No server and no network; its only I/O is `ConfigMap.readFile` (files a configuration names).
        .target(
            name: "GatehouseCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto")
            ],
            swiftSettings: swiftSettings
        ),
        // One folder per provider kind.
        .target(
            name: "GatehouseProviders",
            dependencies: [
                "GatehouseCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "BigInt", package: "BigInt"),
            ],
            swiftSettings: swiftSettings
        ),
        // Session stores: memory, SQLite, PostgreSQL, and the session cache in front of them.
        .target(
            name: "GatehouseStore",
            dependencies: [
                "GatehouseCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // gatehouse.yaml and Providers/*.yaml: YAML with line numbers, secrets, validation.
        .target(
            name: "GatehouseConfiguration",
            dependencies: [
                "GatehouseCore",
                .product(name: "Yams", package: "Yams"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        // The Hummingbird server: routes, proxy, refresh. Wires everything together.
        .target(
            name: "GatehouseServer",
            dependencies: [
                "GatehouseCore", "GatehouseProviders", "GatehouseStore", "GatehouseConfiguration",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceContextModule", package: "swift-service-context"),
                .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
            ],
            // Compiled into the binary (one static executable for the package and the image), not a bundle.
            resources: [.embedInCode("OpenAPI/openapi.json")],
            swiftSettings: swiftSettings
        ),
        // Loopback stand-ins for `gatehouse demo` and the end-to-end tests.
        .target(
            name: "GatehouseDemo",
            dependencies: [
                "GatehouseCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "gatehouse",
            dependencies: [
                "GatehouseCore", "GatehouseServer", "GatehouseConfiguration", "GatehouseDemo", "GatehouseProviders",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // `gatehouse-bench`: session-store lookup latency and session seeding for bench/scale.sh, DPoP proofs, the SwiftNIO
        // relays that measure the floor under the gateway in bench/run.sh. Not a test.
        .executableTarget(
            name: "GatehouseBench",
            dependencies: [
                "GatehouseCore", "GatehouseStore", "GatehouseConfiguration", "GatehouseServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseCoreTests",
            dependencies: ["GatehouseCore"],
            swiftSettings: swiftSettings
        ),
        // What several test targets need of the machine: child processes run to completion off the tests' threads.
        .target(
            name: "GatehouseTestSupport",
            dependencies: ["GatehouseCore"],
            path: "Tests/GatehouseTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseProvidersTests",
            dependencies: ["GatehouseCore", "GatehouseProviders", "GatehouseDemo", "GatehouseTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseStoreTests",
            dependencies: [
                "GatehouseCore", "GatehouseStore", "GatehouseTestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseConfigurationTests",
            dependencies: [
                "GatehouseCore", "GatehouseConfiguration", "GatehouseProviders",
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseServerTests",
            dependencies: [
                "GatehouseCore", "GatehouseServer", "GatehouseStore", "GatehouseConfiguration", "GatehouseDemo",
                "GatehouseProviders",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
