import GatehouseCore

extension GatewayConfiguration {
    /// `access:` — who may sign in (`login`), who may reach which backend path (`rules`, first match decides),
    /// and what applies when no rule matches (`default`: `authenticated` or `deny`). Every problem of the
    /// section is reported, each at its line.
    static func access(_ map: ConfigMap) throws -> AccessPolicy {
        var errors = ErrorCollector()
        var policy = AccessPolicy()
        let file = map.file
        errors.run(file: file, ()) {
            policy.login = try map.maps("login").map { try condition($0) }
        }
        let rules = errors.run(file: file, []) { try map.maps("rules") }
        var names: Set<String> = []
        for rule in rules {
            guard let parsed = errors.attempt(file: file, { try accessRule(rule) }) else { continue }
            if !names.insert(parsed.name).inserted {
                errors.append(rule.error("name", "'\(rule.qualified("name"))': another rule is already named '\(parsed.name)'"))
            }
            policy.rules.append(parsed)
        }
        errors.run(file: file, ()) {
            for entry in try map.locatedStrings("return_to_origins") ?? [] {
                guard WebOrigin.isOrigin(entry.value) else {
                    throw ConfigError(
                        at: entry.node,
                        "'\(map.qualified("return_to_origins"))' entry '\(entry.value)' must be an origin like https://app.example.com")
                }
                policy.returnToOrigins.append(entry.value)
            }
        }
        errors.run(file: file, ()) {
            if let fallback = try map.choice("default", ["deny", "authenticated"]) {
                policy.fallback = AccessPolicy.Fallback(rawValue: fallback) ?? .authenticated
            }
        }
        errors.run(file: file, ()) { try map.finish() }
        guard errors.isEmpty else { throw ConfigurationErrors(errors.errors) }
        return policy
    }

    /// One rule. Read collecting (the way `gatehouse.yaml` is read), every problem of it is reported in one run —
    /// a rule written as one flow mapping has them all on one line; read otherwise, the first is thrown.
    private static func accessRule(_ map: ConfigMap) throws -> AccessRule {
        let name = try map.requiredString("name")
        var paths: [PathPattern] = []
        if let patterns = try map.strings("paths"), !patterns.isEmpty {
            for pattern in patterns {
                do throws(PathPatternError) {
                    paths.append(try PathPattern(pattern))
                } catch {
                    try map.report("paths", "'\(map.qualified("paths"))' pattern '\(pattern)' \(error.message)")
                }
            }
        } else {
            try map.report("paths", "'\(map.qualified("paths"))' is required: the backend paths the rule is for, like [\"/admin/**\"]")
        }
        var methods: Set<String>?
        if let listed = try map.strings("methods") {
            if let method = listed.first(where: { $0.isEmpty || !$0.allSatisfy({ $0.isASCII && $0.isLetter }) }) {
                try map.report("methods", "'\(map.qualified("methods"))' entry '\(method)' is not an HTTP method")
            }
            methods = Set(listed.map { $0.uppercased() })
        }
        let hosts = try map.hostPatterns("hosts", empty: "leave it out for every host")
        var allow = AccessRule.Allow.authenticated
        if let allowNode = map.node("allow") {
            switch allowNode.value {
            case .scalar("anyone"): allow = .anyone
            case .scalar("authenticated"): allow = .authenticated
            case .sequence: allow = .conditions(try map.maps("allow").map { try condition($0) })
            default:
                try map.report(
                    ConfigError(at: allowNode, "'\(map.qualified("allow"))' must be \"anyone\", \"authenticated\" or a list of conditions"),
                    key: "allow")
            }
        } else {
            try map.report("allow", "'\(map.qualified("allow"))' is required: \"anyone\", \"authenticated\" or a list of conditions")
        }
        var require: StepUpRequirement?
        if let required = try map.map("require") {
            require = try stepUp(required)
            if allow == .anyone {
                try map.report("require", "'\(map.qualified("require"))' needs a rule that asks for a session: not allow: \"anyone\"")
            }
        }
        try map.finish()
        return AccessRule(name: name, paths: paths, methods: methods, hosts: hosts, allow: allow, require: require)
    }

    /// `require: {acr: [...], max_age_seconds: N}`: either key alone, not neither.
    private static func stepUp(_ map: ConfigMap) throws -> StepUpRequirement {
        let acr = try map.strings("acr")
        // A value goes into the challenge's quoted, space-separated `acr_values`.
        if let bad = acr?.first(where: {
            $0.isEmpty || !$0.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" }
        }) {
            try map.report("acr", "'\(map.qualified("acr"))' entry '\(bad)' must be a printable ASCII value without spaces or quotes")
        }
        if acr?.isEmpty == true { try map.report("acr", "'\(map.qualified("acr"))' must list at least one value, or be left out") }
        let maxAge = try map.positiveInt("max_age_seconds", unit: "seconds")
        if acr == nil, maxAge == nil, !map.hasProblem("acr"), !map.hasProblem("max_age_seconds") {
            let section = map.qualified("acr").dropLast(".acr".count)
            try map.report("acr", "'\(section)' must name acr, max_age_seconds or both")
        }
        try map.finish()
        return StepUpRequirement(acr: acr, maxAgeSeconds: maxAge)
    }

    /// One condition: ALL of its keys must match; a key's list matches ANY of its values.
    private static func condition(_ map: ConfigMap) throws -> AccessCondition {
        var condition = AccessCondition(
            providers: try map.strings("provider"), subjects: try map.strings("subject"), emails: try map.strings("email"),
            emailDomains: try map.strings("email_domain"), emailVerified: try map.bool("email_verified"), groups: try map.strings("group"))
        if let claims = try map.map("claim") {
            if case .mapping(let entries) = claims.node.value {
                for entry in entries { condition.claims[entry.key] = try claims.strings(entry.key) ?? [] }
            }
            try claims.finish()
        }
        if let domains = condition.emailDomains, let bad = domains.first(where: { $0.isEmpty || $0.contains("@") || $0.hasPrefix(".") }) {
            throw map.error("email_domain", "'\(map.qualified("email_domain"))' entry '\(bad)' must be a domain like example.com (matched exactly)")
        }
        try map.finish()
        guard !condition.isEmpty else {
            throw ConfigError(
                at: map.node,
                "'\(map.section)' is empty: a condition needs at least one of provider, subject, email, email_domain, email_verified, group, claim")
        }
        return condition
    }
}
