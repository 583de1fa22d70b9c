import Crypto
public import GatehouseConfiguration
public import GatehouseCore

extension KeyMaterial {
    /// What is wrong with the configured key files, each at the `keys:` line that names it: unreadable,
    /// a sealing key that is not 32 bytes in base64, a signing key that is not a P-256 private key in PEM.
    /// `gatehouse check` reports these with the rest; `serve` refuses to start with them. Generated keys
    /// (none configured) are not checked: they do not exist before the first start.
    public static func problems(in keys: GatewayConfiguration.Keys) -> [ConfigError] {
        var problems: [ConfigError] = []
        for key in keys.sealing {
            guard let text = try? read(key.file) else {
                problems.append(key.error("key '\(key.id)': cannot read the key file '\(key.file)'"))
                continue
            }
            if sealingKeyBytes(text) == nil {
                problems.append(
                    key.error("key '\(key.id)': the sealing key file '\(key.file)' must hold 32 bytes in base64 (gatehouse keys generate)"))
            }
        }
        for key in keys.signing {
            guard let text = try? read(key.file) else {
                problems.append(key.error("key '\(key.id)': cannot read the key file '\(key.file)'"))
                continue
            }
            if (try? P256.Signing.PrivateKey(pemRepresentation: text)) == nil {
                problems.append(
                    key.error(
                        "key '\(key.id)': the signing key file '\(key.file)' must hold a P-256 (ES256) private key in PEM (gatehouse keys generate)"))
            }
        }
        return problems
    }
}
