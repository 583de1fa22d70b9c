// swift-tools-version:5.4
// libFuzzer targets (scripts/fuzz builds and runs them). A package of its own, at tools version 5.4: from 5.5 on,
// SwiftPM renames an executable's entry point and links it as `main`, which collides with libFuzzer's own `main`.
// Build: swift build --package-path Fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
import PackageDescription

let package = Package(
    name: "GatehouseFuzz",
    dependencies: [.package(name: "gatehouse", path: "..")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "GatehouseCore", package: "gatehouse")]),
        .executableTarget(
            name: "FuzzBrowserIDAssertion",
            dependencies: ["FuzzSupport", .product(name: "GatehouseProviders", package: "gatehouse")]),
        .executableTarget(
            name: "FuzzACSToken",
            dependencies: ["FuzzSupport", .product(name: "GatehouseProviders", package: "gatehouse")]),
        .executableTarget(
            name: "FuzzCapture",
            dependencies: [
                "FuzzSupport", .product(name: "GatehouseProviders", package: "gatehouse"),
                .product(name: "GatehouseConfiguration", package: "gatehouse"),
            ]),
        .executableTarget(name: "FuzzPath", dependencies: ["FuzzSupport", .product(name: "GatehouseCore", package: "gatehouse")]),
        .executableTarget(name: "FuzzHTTPHeads", dependencies: ["FuzzSupport", .product(name: "GatehouseCore", package: "gatehouse")]),
        .executableTarget(
            name: "FuzzConfiguration",
            dependencies: [
                "FuzzSupport", .product(name: "GatehouseProviders", package: "gatehouse"),
                .product(name: "GatehouseConfiguration", package: "gatehouse"),
            ]),
    ]
)
