import ArgumentParser

/// `gatehouse-bench`: measurement helpers for `bench/scale.sh` and `bench/run.sh`. Not part of the gateway, not a test.
///
/// ```sh
/// gatehouse-bench store-lookup --store sqlite --path /tmp/s.sqlite3 --sessions 1000000
/// gatehouse-bench seed-session --config gatehouse.yaml --provider demo
/// ```
@main
struct GatehouseBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse-bench",
        abstract: "Benchmark helpers: store lookups, a ready-made session, DPoP proofs, SwiftNIO relays (the floors under a hop).",
        subcommands: [
            StoreLookupCommand.self, SeedSessionCommand.self, DPoPProofsCommand.self, DPoPVerifyCommand.self, ByteRelayCommand.self,
            HTTPRelayCommand.self, HeadRelayCommand.self,
        ]
    )
}
