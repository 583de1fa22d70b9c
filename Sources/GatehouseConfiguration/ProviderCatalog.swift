public import Foundation
public import GatehouseCore

/// Loads the provider files of `providers_dir`: one `<id>.yaml` per provider instance.
///
/// Each file's common keys (`id`, `kind`, `name`, `redirect_uris`, `claims`, `api`) are read here; the rest
/// go to the registered ``ProviderKind``, which reads its own keys and refuses unknown ones. Problems are
/// collected across all files, so one run of `gatehouse check` reports all of them.
///
/// ```swift
/// let providers = try ProviderCatalog.load(
///     directory: configuration.providersDirectory, kinds: ProviderRegistry.kinds, context: context)
/// ```
public enum ProviderCatalog {
    /// File extensions read as provider files.
    public static let fileExtensions: Set<String> = ["yaml", "yml"]

    /// Loads every `*.yaml` / `*.yml` file of a directory.
    /// - Parameters:
    ///   - directory: the providers directory; a missing directory means no providers.
    ///   - kinds: the provider kinds by their `kind:` name.
    ///   - context: handed to each kind's `make`.
    ///   - environment: where `${VAR}` is looked up.
    /// - Returns: the providers sorted by id.
    /// - Throws: ``ConfigurationErrors`` listing every problem in every file.
    public static func load(
        directory: String,
        kinds: [String: any ProviderKind.Type],
        context: ProviderContext,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [any AuthProvider] {
        let files = try providerFiles(in: directory)
        return try load(files: files, kinds: kinds, context: context, environment: environment)
    }

    /// The provider files of a directory, sorted by name; none when it does not exist.
    /// - Parameter directory: the providers directory.
    /// - Throws: ``ConfigurationErrors`` when the path exists but is not a readable directory.
    public static func providerFiles(in directory: String) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw ConfigurationErrors([ConfigError(file: directory, line: 1, message: "providers_dir is not a readable directory")])
        }
        return
            names
            .filter { !$0.hasPrefix(".") && fileExtensions.contains(($0 as NSString).pathExtension.lowercased()) }
            .sorted()
            .map { (directory as NSString).appendingPathComponent($0) }
    }

    /// Loads the given provider files.
    /// - Parameters:
    ///   - files: provider file paths; each file's id must equal its name without extension.
    ///   - kinds: the provider kinds by their `kind:` name.
    ///   - context: handed to each kind's `make`.
    ///   - environment: where `${VAR}` is looked up.
    /// - Returns: the providers sorted by id.
    /// - Throws: ``ConfigurationErrors`` listing every problem in every file.
    public static func load(
        files: [String],
        kinds: [String: any ProviderKind.Type],
        context: ProviderContext,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [any AuthProvider] {
        try loadReporting(files: files, kinds: kinds, context: context, environment: environment).providers
    }

    /// The providers a directory configures, and the optional ones it skipped.
    public struct Loaded: Sendable {
        /// Sorted by id.
        public var providers: [any AuthProvider]
        /// One line per file marked `optional: true` that was skipped because an environment variable it
        /// references is not set (`file:line: provider 'x' skipped: …`): a warning, not an error.
        public var skipped: [ConfigError]
    }

    /// Like ``load(directory:kinds:context:environment:)``, and says which optional providers were skipped.
    public static func loadReporting(
        directory: String,
        kinds: [String: any ProviderKind.Type],
        context: ProviderContext,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Loaded {
        try loadReporting(files: try providerFiles(in: directory), kinds: kinds, context: context, environment: environment)
    }

    /// Like ``load(files:kinds:context:environment:)``, and says which optional providers were skipped.
    public static func loadReporting(
        files: [String],
        kinds: [String: any ProviderKind.Type],
        context: ProviderContext,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Loaded {
        var skipped: [ConfigError] = []
        var errors: [ConfigError] = []
        var providers: [any AuthProvider] = []
        var seen: [String: String] = [:]
        for file in files {
            var collector = ErrorCollector()
            guard let document = collector.attempt(file: file, { try YAMLDocument(contentsOfFile: file) }) else {
                errors += collector.errors
                continue
            }
            let provider = load(document, kinds: kinds, context: context, environment: environment, errors: &collector)
            // `optional: true`: a provider whose only problems are unset environment variables is left out.
            if provider == nil, !collector.isEmpty, isOptional(document), collector.errors.allSatisfy({ $0.unsetVariable != nil }) {
                // The loader stops at the first unset variable of a key: name every one the file references.
                let variables = Set(collector.errors.compactMap(\.unsetVariable))
                    .union(EnvironmentReference.names(in: document.root).filter { environment[$0] == nil })
                    .sorted().joined(separator: ", ")
                let first = collector.sortedByLine()[0]
                skipped.append(
                    ConfigError(
                        file: file, line: first.line,
                        message: "provider skipped (optional: true): environment variable(s) \(variables) not set"))
                continue
            }
            if let provider {
                let id = provider.descriptor.id
                if let other = seen[id] {
                    collector.append(
                        ConfigError(file: file, line: idLine(in: document), message: "duplicate provider id '\(id)' (also in \(other))"))
                } else {
                    seen[id] = file
                    providers.append(provider)
                }
            }
            errors += collector.sortedByLine()
        }
        guard errors.isEmpty else { throw ConfigurationErrors(errors) }
        return Loaded(providers: providers.sorted { $0.descriptor.id < $1.descriptor.id }, skipped: skipped)
    }

    /// Whether the file says `optional: true` (read from the raw document, so that it counts even when the
    /// rest of the file cannot be read).
    private static func isOptional(_ document: YAMLDocument) -> Bool {
        guard case .mapping(let entries) = document.root.value,
            let entry = entries.first(where: { $0.key == "optional" }), case .scalar(let text) = entry.value.value
        else { return false }
        return ["true", "yes", "on"].contains(text.lowercased())
    }

    /// Loads one provider from a parsed file.
    /// - Parameters:
    ///   - document: the provider file.
    ///   - kinds: the provider kinds by their `kind:` name.
    ///   - context: handed to the kind's `make`.
    ///   - environment: where `${VAR}` is looked up.
    /// - Throws: ``ConfigurationErrors`` listing the file's problems.
    public static func provider(
        from document: YAMLDocument,
        kinds: [String: any ProviderKind.Type],
        context: ProviderContext,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> any AuthProvider {
        var collector = ErrorCollector()
        guard let provider = load(document, kinds: kinds, context: context, environment: environment, errors: &collector),
            collector.isEmpty
        else { throw ConfigurationErrors(collector.sortedByLine()) }
        return provider
    }

    // MARK: Private

    /// Reads one provider file to its end, collecting every problem (each key's own, the kind's checks, unknown
    /// keys) into `errors`; the provider only when there are none.
    private static func load(
        _ document: YAMLDocument,
        kinds: [String: any ProviderKind.Type],
        context: ProviderContext,
        environment: [String: String],
        errors: inout ErrorCollector
    ) -> (any AuthProvider)? {
        let file = document.file
        let problems = ConfigProblems()
        guard
            let map = errors.attempt(
                file: file,
                {
                    try ConfigMap(document.root, environment: environment, baseDirectory: ConfigPath.directory(of: file), problems: problems)
                })
        else { return nil }
        let provider: (any AuthProvider)?
        do {
            provider = try read(map, kinds: kinds, context: context)
        } catch {
            // The accessors of a collecting map record their problems; what is thrown comes from a kind's own code.
            problems.absorb(error, file: file)
            provider = nil
        }
        for error in problems.errors { errors.append(error) }
        return problems.isEmpty ? provider : nil
    }

    /// The common keys, then the kind's own (which ends with `finish()`); nil when the kind is unknown.
    private static func read(_ map: ConfigMap, kinds: [String: any ProviderKind.Type], context: ProviderContext) throws -> (any AuthProvider)? {
        let expectedID = ((map.file as NSString).lastPathComponent as NSString).deletingPathExtension
        let id = try map.requiredString("id")
        if !map.hasProblem("id") {
            if id != expectedID {
                try map.report("id", "'id' must equal the file name '\(expectedID)', not '\(id)'")
            } else if !id.unicodeScalars.allSatisfy(isIDCharacter) {
                try map.report("id", "'id' may only contain letters, digits, '-', '_' and '.', not '\(id)'")
            }
        }
        let kindName = try map.requiredString("kind")
        let kind = map.hasProblem("kind") ? nil : kinds[kindName]
        if kind == nil {
            try map.report("kind", "unknown kind '\(kindName)' (known: \(kinds.keys.sorted().joined(separator: ", ")))")
        }
        let name = try map.string("name")
        _ = try map.bool("optional")
        let redirectURIs = try map.redirectURIs("redirect_uris")
        let claims = try ClaimMapping(map.map("claims"), defaults: kind?.defaultClaims ?? ClaimMapping())
        let api = try ProviderAPI(
            map.map("api"), defaultAuthentication: kind?.defaultAPIAuthentication ?? .bearer, styles: kind?.apiAuthenticationStyles ?? [])
        let caFile = try trustedCAFile(map.map("tls"))
        // Without its kind, the file's other keys are neither read nor refused: nobody knows which are valid.
        guard let kind else { return nil }
        let descriptor = ProviderDescriptor(
            id: id, kind: kind.kind, name: name, redirectURIs: redirectURIs, claims: claims, api: api, caFile: caFile)
        return try kind.make(descriptor: descriptor, settings: map, context: caFile.map { try context.trusting(caFile: $0) } ?? context)
    }

    /// `tls: {ca_file}` of any kind: the bundle, read and checked (absolute); nil when not set.
    private static func trustedCAFile(_ map: ConfigMap?) throws -> String? {
        guard let map else { return nil }
        let file = try map.nonEmptyString("ca_file").map(map.resolve)
        try map.finish()
        guard let file else { return nil }
        do {
            _ = try CertificateBundle.load(file: file)
        } catch {
            try map.report("ca_file", "'\(map.qualified("ca_file"))': \(error)")
        }
        return file
    }

    /// `letters, digits, - _ .`: ids appear in URL paths (`/v1/auth/{id}/…`) and file names.
    private static func isIDCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "-_.".unicodeScalars.contains(scalar))
    }

    private static func idLine(in document: YAMLDocument) -> Int {
        guard case .mapping(let entries) = document.root.value else { return document.root.line }
        return entries.first { $0.key == "id" }?.line ?? document.root.line
    }
}
