import Foundation
import GatehouseCore
import Testing

@Suite struct ConfigMapTests {
    // MARK: Unknown, duplicate and required keys

    @Test("finish reports an unknown key with the file and line where the key is written")
    func unknownKeyNamesFileAndLine() throws {
        let map = try ConfigMap(Nodes.scalars([("path", "/var/lib/gatehouse"), ("pth", "typo"), ("kind", "sqlite")], firstLine: 4), section: "store")
        _ = try map.string("path")
        _ = try map.string("kind")
        let error = try #require(throws: ConfigError.self) { try map.finish() }
        #expect(error.file == Nodes.file)
        #expect(error.line == 5)
        #expect(error.message.contains("unknown key 'store.pth'"))
        #expect(error.description.hasPrefix("Providers/example.yaml:5: "))
    }

    @Test("finish passes when every key was asked for, even keys that were only checked with contains")
    func finishPassesWhenAllKnown() throws {
        let map = try ConfigMap(Nodes.scalars([("a", "1"), ("b", "2")]))
        _ = try map.string("a")
        _ = map.contains("b")
        try map.finish()
    }

    @Test("asking for an absent key does not make finish fail")
    func absentKeyIsFine() throws {
        let map = try ConfigMap(Nodes.scalars([("a", "1")]))
        #expect(try map.string("a") == "1")
        #expect(try map.string("missing") == nil)
        try map.finish()
    }

    @Test("a duplicate key is refused at the line of its second occurrence")
    func duplicateKey() throws {
        let node = Nodes.scalars([("client_id", "one"), ("scopes", "x"), ("client_id", "two")], firstLine: 2)
        let error = try #require(throws: ConfigError.self) { try ConfigMap(node, section: "oauth2") }
        #expect(error.line == 4)
        #expect(error.file == Nodes.file)
        #expect(error.message.contains("duplicate key 'oauth2.client_id'"))
    }

    @Test("a missing required key is reported at the mapping's line, naming the qualified key")
    func requiredMissing() throws {
        let map = try ConfigMap(Nodes.scalars([("client_id", "x")], firstLine: 7), section: "provider")
        let error = try #require(throws: ConfigError.self) { try map.requiredString("token_endpoint") }
        #expect(error == ConfigError(file: Nodes.file, line: 7, message: "'provider.token_endpoint' is required"))
    }

    @Test("an empty or null required key counts as missing")
    func requiredEmpty() throws {
        let node = Nodes.mapping([("empty", 2, Nodes.scalar("", line: 2)), ("nothing", 3, Nodes.null(line: 3))])
        let map = try ConfigMap(node)
        #expect(throws: ConfigError.self) { try map.requiredString("empty") }
        #expect(throws: ConfigError.self) { try map.requiredString("nothing") }
        #expect(try map.string("nothing") == nil)
        #expect(map.node("nothing") == nil)
        #expect(map.contains("nothing"))
    }

    // MARK: Types

    @Test("a mapping where a string is expected is a type error at the value's line")
    func wrongTypeMapping() throws {
        let nested = Nodes.scalars([("inner", "x")], firstLine: 3)
        let map = try ConfigMap(Nodes.mapping([("client_id", 2, nested)]), section: "oauth2")
        let error = try #require(throws: ConfigError.self) { try map.string("client_id") }
        #expect(error.line == 3)
        #expect(error.message == "'oauth2.client_id' must be a string")
    }

    @Test("a list where a string is expected is a type error")
    func wrongTypeSequence() throws {
        let map = try ConfigMap(Nodes.mapping([("client_id", 2, Nodes.sequence(["a", "b"], line: 2))]))
        #expect(throws: ConfigError.self) { try map.string("client_id") }
    }

    @Test("a document that is not a mapping is refused; null reads as an empty mapping")
    func documentMustBeMapping() throws {
        let error = try #require(throws: ConfigError.self) { try ConfigMap(Nodes.scalar("hello", line: 1)) }
        #expect(error.message.contains("must be a mapping"))
        let empty = try ConfigMap(Nodes.null(line: 1))
        #expect(try empty.string("anything") == nil)
        try empty.finish()
    }

    @Test("strings reads a list, and a single string as a one-element list")
    func stringsList() throws {
        let node = Nodes.mapping([
            ("list", 1, Nodes.sequence(["read", "write"], line: 1)),
            ("single", 4, Nodes.scalar("openid", line: 4)),
            ("nested", 5, Nodes.mapping([], line: 5)),
        ])
        let map = try ConfigMap(node)
        #expect(try map.strings("list") == ["read", "write"])
        #expect(try map.strings("single") == ["openid"])
        #expect(try map.strings("absent") == nil)
        #expect(throws: ConfigError.self) { try map.strings("nested") }
    }

    @Test("bool accepts true/false/yes/no/on/off and refuses other words")
    func bools() throws {
        let map = try ConfigMap(Nodes.scalars([("a", "true"), ("b", "No"), ("c", "on"), ("d", "maybe")]))
        #expect(try map.bool("a") == true)
        #expect(try map.bool("b") == false)
        #expect(try map.bool("c") == true)
        let error = try #require(throws: ConfigError.self) { try map.bool("d") }
        #expect(error.line == 4)
    }

    // MARK: Int, choice, URL

    @Test("int reads whole numbers within the range")
    func intInRange() throws {
        let map = try ConfigMap(Nodes.scalars([("port", "8080")]))
        #expect(try map.int("port", range: 1...65535) == 8080)
    }

    @Test("int out of range is an error at the key's line naming the range")
    func intOutOfRange() throws {
        let map = try ConfigMap(Nodes.scalars([("name", "x"), ("port", "70000")], firstLine: 10), section: "listen")
        let error = try #require(throws: ConfigError.self) { try map.int("port", range: 1...65535) }
        #expect(error.line == 11)
        #expect(error.message == "'listen.port' must be between 1 and 65535, not 70000")
    }

    @Test("int refuses text that is not a whole number")
    func intNotANumber() throws {
        let map = try ConfigMap(Nodes.scalars([("port", "80.5"), ("other", "eighty")]))
        #expect(throws: ConfigError.self) { try map.int("port") }
        let error = try #require(throws: ConfigError.self) { try map.int("other") }
        #expect(error.message.contains("whole number"))
        #expect(error.line == 2)
    }

    @Test("choice accepts an allowed value and refuses others, listing the allowed ones")
    func choice() throws {
        let map = try ConfigMap(Nodes.scalars([("kind", "sqlite"), ("other", "redis")]), section: "store")
        #expect(try map.choice("kind", ["memory", "sqlite"]) == "sqlite")
        let error = try #require(throws: ConfigError.self) { try map.choice("other", ["memory", "sqlite"]) }
        #expect(error.line == 2)
        #expect(error.message == "'store.other' must be one of memory, sqlite, not 'redis'")
    }

    @Test("url accepts absolute http and https URLs")
    func urlAccepted() throws {
        let map = try ConfigMap(Nodes.scalars([("a", "https://auth.example.com/oauth/token"), ("b", "http://127.0.0.1:8080/")]))
        #expect(try map.url("a") == "https://auth.example.com/oauth/token")
        #expect(try map.requiredURL("b") == "http://127.0.0.1:8080/")
    }

    @Test(
        "url refuses relative, hostless and non-http URLs",
        arguments: ["example.com/token", "/oauth/token", "ftp://example.com/x", "https://", "javascript:alert(1)", "not a url"])
    func urlRefused(text: String) throws {
        let map = try ConfigMap(Nodes.scalars([("x", "1"), ("token_endpoint", text)]), section: "oauth2")
        let error = try #require(throws: ConfigError.self) { try map.url("token_endpoint") }
        #expect(error.line == 2)
        #expect(error.message.contains("'oauth2.token_endpoint' must be an absolute http(s) URL"))
    }

    @Test("requiredURL of a missing key says it is required")
    func requiredURLMissing() throws {
        let map = try ConfigMap(Nodes.scalars([]), section: "oauth2")
        let error = try #require(throws: ConfigError.self) { try map.requiredURL("token_endpoint") }
        #expect(error.message == "'oauth2.token_endpoint' is required")
    }

    // MARK: Environment and secrets

    @Test("${VAR} is replaced with the environment's value, also several times and inside text")
    func environmentExpansion() throws {
        let map = try ConfigMap(
            Nodes.scalars([("a", "${HOST}"), ("b", "https://${HOST}:${PORT}/x")]),
            environment: ["HOST": "auth.example.com", "PORT": "8443"])
        #expect(try map.string("a") == "auth.example.com")
        #expect(try map.string("b") == "https://auth.example.com:8443/x")
    }

    @Test("an unset environment variable is an error at the value's line naming the variable")
    func environmentUnset() throws {
        let map = try ConfigMap(
            Nodes.scalars([("a", "x"), ("client_secret", "${CLIENT_SECRET}")], firstLine: 3), section: "oauth2", environment: [:])
        let error = try #require(throws: ConfigError.self) { try map.secret("client_secret") }
        #expect(error.line == 4)
        #expect(error.message.contains("CLIENT_SECRET"))
        #expect(error.message.contains("not set"))
    }

    @Test("an unterminated ${ is an error")
    func environmentUnterminated() throws {
        let map = try ConfigMap(Nodes.scalars([("a", "${HOST")]), environment: ["HOST": "x"])
        #expect(throws: ConfigError.self) { try map.string("a") }
    }

    @Test("an inline secret is refused at its line with the forms to use, and not echoed")
    func inlineSecret() throws {
        let map = try ConfigMap(Nodes.scalars([("x", "1"), ("client_secret", "s3cret")]), section: "oauth2")
        let error = try #require(throws: ConfigError.self) { try map.secret("client_secret") }
        #expect(error.line == 2)
        #expect(error.message == "'oauth2.client_secret' must not be written inline: use client_secret: \"${ENV_VAR}\" or client_secret_file: path")
        #expect(!error.description.contains("s3cret"))
    }

    @Test(
        "only a whole ${NAME} reference is accepted inline: text around it, two references or a number are refused",
        arguments: ["prefix-${SECRET}", "${SECRET}${SECRET}", "${SECRET", "${}", "42"])
    func inlineSecretVariants(text: String) throws {
        let map = try ConfigMap(Nodes.scalars([("client_secret", text)]), environment: ["SECRET": "from-env"])
        let error = try #require(throws: ConfigError.self) { try map.secret("client_secret") }
        #expect(error.message.contains("must not be written inline"))
    }

    @Test("a collecting map records an inline secret and answers nil")
    func inlineSecretCollected() throws {
        let problems = ConfigProblems()
        let map = try ConfigMap(Nodes.scalars([("client_secret", "s3cret")]), problems: problems)
        #expect(try map.secret("client_secret") == nil)
        try map.finish()
        #expect(problems.errors.map(\.line) == [1])
        #expect(map.hasProblem("client_secret") && map.hasProblem("client_secret_file"))
    }

    @Test("a secret from ${ENV} is expanded")
    func environmentSecret() throws {
        let map = try ConfigMap(Nodes.scalars([("client_secret", "${SECRET}")]), environment: ["SECRET": "from-env"])
        #expect(try map.secret("client_secret") == "from-env")
    }

    @Test("an absent secret is nil and both of its keys count as known")
    func absentSecret() throws {
        let map = try ConfigMap(Nodes.scalars([]))
        #expect(try map.secret("client_secret") == nil)
        try map.finish()
    }

    @Test("a <key>_file secret is read from the file with its trailing newline stripped, relative to the base directory")
    func fileSecret() throws {
        let directory = try TemporaryDirectory()
        try Data("hunter2\n".utf8).write(to: directory.url.appendingPathComponent("secret.txt"))
        try Data("with-crlf\r\n\r\n".utf8).write(to: directory.url.appendingPathComponent("crlf.txt"))
        let map = try ConfigMap(
            Nodes.scalars([("client_secret_file", "secret.txt"), ("other_file", directory.url.appendingPathComponent("crlf.txt").path)]),
            baseDirectory: directory.url.path)
        #expect(try map.secret("client_secret") == "hunter2")
        #expect(try map.secret("other") == "with-crlf")
        try map.finish()
    }

    @Test("a <key>_file secret that cannot be read is an error at the _file key")
    func fileSecretUnreadable() throws {
        let directory = try TemporaryDirectory()
        let map = try ConfigMap(
            Nodes.scalars([("x", "1"), ("client_secret_file", "missing.txt")]), section: "oauth2", baseDirectory: directory.url.path)
        let error = try #require(throws: ConfigError.self) { try map.secret("client_secret") }
        #expect(error.line == 2)
        #expect(error.message.contains("oauth2.client_secret_file"))
        #expect(error.message.contains("missing.txt"))
    }

    @Test("giving both <key> and <key>_file is an error, and the secret is not echoed")
    func bothSecretForms() throws {
        let map = try ConfigMap(Nodes.scalars([("client_secret", "inline-s3cret"), ("client_secret_file", "secret.txt")]), section: "oauth2")
        let error = try #require(throws: ConfigError.self) { try map.secret("client_secret") }
        #expect(error.line == 2)
        #expect(error.message.contains("oauth2.client_secret"))
        #expect(error.message.contains("oauth2.client_secret_file"))
        #expect(!error.message.contains("inline-s3cret"))
    }

    // MARK: Nesting

    @Test("nested maps qualify their keys with the parent section")
    func nestedSections() throws {
        let inner = Nodes.scalars([("pth", "/tmp")], firstLine: 3)
        let map = try ConfigMap(Nodes.mapping([("store", 2, inner)]))
        let store = try #require(try map.map("store"))
        #expect(store.section == "store")
        let error = try #require(throws: ConfigError.self) { try store.finish() }
        #expect(error.message == "unknown key 'store.pth'")
        #expect(error.line == 3)
        try map.finish()
    }

    @Test("mapOrEmpty gives an empty map for an absent section; maps reads a list of mappings")
    func mapOrEmptyAndMaps() throws {
        let backends = ConfigNode(
            .sequence([Nodes.scalars([("url", "https://a.example")], firstLine: 3), Nodes.scalars([("url", "https://b.example")], firstLine: 4)]),
            file: Nodes.file, line: 2)
        let map = try ConfigMap(Nodes.mapping([("backends", 2, backends)]))
        let empty = try map.mapOrEmpty("cookie")
        #expect(empty.section == "cookie")
        #expect(try empty.string("name") == nil)
        let items = try map.maps("backends")
        #expect(items.count == 2)
        #expect(items.map(\.section) == ["backends[0]", "backends[1]"])
        #expect(try items[1].url("url") == "https://b.example")
        #expect(try map.maps("absent").isEmpty)
    }

    // MARK: Collecting

    @Test("a collecting map records each problem, answers nil or a placeholder, and reads on to finish")
    func collectingReadsToTheEnd() throws {
        let problems = ConfigProblems()
        let node = Nodes.scalars(
            [("port", "eighty"), ("tokn_endpoint", "https://a.example/token"), ("colour", "blue"), ("name", "ok")], firstLine: 2)
        let map = try ConfigMap(node, section: "p", problems: problems)
        #expect(map.collects)
        #expect(try map.int("port") == nil)
        #expect(try map.requiredURL("token_endpoint") == ConfigMap.placeholderURL)
        #expect(try map.requiredString("client_id") == "")
        #expect(try map.string("name") == "ok")
        try map.finish()
        #expect(
            problems.sortedByLine().map(\.description) == [
                "\(Nodes.file):2: 'p.port' must be a whole number, not 'eighty'",
                "\(Nodes.file):2: 'p.client_id' is required",
                "\(Nodes.file):3: 'p.token_endpoint' is required; 'p.tokn_endpoint' is not a known key: did you mean 'token_endpoint'?",
                "\(Nodes.file):4: unknown key 'p.colour'",
            ])
    }

    @Test("a check that depends on a key with a problem is dropped as its follow-on; a second problem of a key too")
    func collectingDropsFollowOns() throws {
        let problems = ConfigProblems()
        let map = try ConfigMap(Nodes.scalars([("client_secret", "inline"), ("method", "client_secret_post")]), problems: problems)
        #expect(try map.secret("client_secret") == nil)
        try map.report("method", "'method' needs 'client_secret'", after: ["client_secret"])
        try map.report("client_secret", "another problem of the same key")
        #expect(problems.errors.count == 1)
        try map.report("method", "'method' is wrong on its own")
        #expect(problems.errors.map(\.line) == [1, 2])
    }

    @Test("a nested map that is not a mapping is a problem of its key; the keys below it are not reported again")
    func collectingNested() throws {
        let problems = ConfigProblems()
        let map = try ConfigMap(Nodes.mapping([("api", 3, Nodes.scalar("https://x", line: 3))]), problems: problems)
        #expect(try map.map("api") == nil)
        #expect(map.hasProblem("api.url"))
        try map.report("api", "'api' again")
        #expect(problems.errors.map(\.message) == ["'api' must be a mapping"])
    }

    @Test("thrown errors are taken in unless they are follow-ons: on a line with a problem, or without a location")
    func absorbingThrownErrors() {
        struct Placeholder: Error {}
        let problems = ConfigProblems()
        problems.absorb(Placeholder(), file: "a.yaml")
        #expect(problems.errors.map(\.description) == ["a.yaml:1: Placeholder()"])
        problems.absorb(Placeholder(), file: "a.yaml")
        problems.absorb(ConfigError(file: "a.yaml", line: 1, message: "same line"), file: "a.yaml")
        problems.absorb(ConfigErrorList([ConfigError(file: "a.yaml", line: 4, message: "new line")]), file: "a.yaml")
        #expect(problems.errors.map(\.line) == [1, 4])
    }
}
