import BlobStore
import Foundation

extension GalleryConfiguration {
    /// The effective configuration: defaults, then the file (if any), then environment variables,
    /// then `overrides` (command-line flags, by file key name), then validation.
    public static func load(
        file: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
        overrides: [(key: String, value: String)] = []
    ) throws -> GalleryConfiguration {
        var configuration = GalleryConfiguration()
        let path = file ?? environment["GALLERYD_CONFIG"]
        if let path, !path.isEmpty {
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ConfigurationError.unreadable(file: path, reason: "cannot read: \(error.localizedDescription)")
            }
            for entry in try ConfigurationFile.parse(text, file: path) {
                guard let key = ConfigurationKey.named(entry.key) else {
                    throw ConfigurationError.unknownKey(key: entry.key, file: path, line: entry.line)
                }
                try key.apply(entry.value, to: &configuration)
            }
            configuration.views = try ViewDefinition.parse(text, file: path)
        }
        for key in ConfigurationKey.all {
            if let value = environment[key.environmentVariable] {
                try key.apply(value, to: &configuration)
            }
        }
        for (name, value) in overrides {
            guard let key = ConfigurationKey.named(name) else {
                throw ConfigurationError.invalid(key: name, reason: "unknown setting")
            }
            try key.apply(value, to: &configuration)
        }
        try configuration.validateSimulation()
        return configuration
    }

    /// The client developers' aids slow down or fail real users' requests: never in production.
    func validateSimulation() throws {
        guard environment == "production" else { return }
        if simulateLatencyMs != 0 {
            throw ConfigurationError.invalid(
                key: "simulate_latency_ms", reason: "not allowed when environment = \"production\"")
        }
        if simulateErrorRate != 0 {
            throw ConfigurationError.invalid(
                key: "simulate_error_rate", reason: "not allowed when environment = \"production\"")
        }
    }

    /// Checks what `serve` needs beyond each value's own range; secrets must also pass `SecretPolicy`.
    public func validateForServing() throws {
        guard !databaseURL.isEmpty else {
            throw ConfigurationError.invalid(
                key: "database_url", reason: "not set (DATABASE_URL or database_url in the config file)")
        }
        guard let masterKey, masterKey.count >= 16 else {
            throw ConfigurationError.invalid(
                key: "master_key",
                reason:
                    "must be at least 16 characters (GALLERYD_MASTER_KEY); \(SecretPolicy.howToGenerate), or let `make run` do it"
            )
        }
        if let problem = SecretPolicy.problem(with: masterKey) {
            throw ConfigurationError.invalid(key: "master_key", reason: problem)
        }
        if let restKey, restKey.count < 8 {
            throw ConfigurationError.invalid(key: "rest_key", reason: "must be at least 8 characters when set")
        }
        try validateURLSigning()
        if storage == "s3" { try validateMultipartParts() }
    }

    /// Private assets need a signing key: `bucket_public = false` (the default) without a
    /// `url_signing_key` of `AssetURLSigner.minimumKeyLength` characters, or one `SecretPolicy`
    /// refuses, is refused.
    public func validateURLSigning() throws {
        guard !bucketPublic else { return }
        guard let urlSigningKey, urlSigningKey.count >= AssetURLSigner.minimumKeyLength else {
            throw ConfigurationError.invalid(
                key: "url_signing_key",
                reason: "must be at least \(AssetURLSigner.minimumKeyLength) characters while bucket_public = false "
                    + "(GALLERYD_URL_SIGNING_KEY; `make run` generates one), or set bucket_public = true to serve assets to anyone"
            )
        }
        if let problem = SecretPolicy.problem(with: urlSigningKey) {
            throw ConfigurationError.invalid(key: "url_signing_key", reason: problem)
        }
    }

    /// S3 multipart limits: parts of at least 5 MiB (the key's range checks that) and at most
    /// 10,000 of them for the largest upload, so `max_upload_bytes` must fit in 10,000 parts.
    public func validateMultipartParts() throws {
        let parts = (Int64(maxUploadBytes) + Int64(s3MultipartPartBytes) - 1) / Int64(s3MultipartPartBytes)
        guard parts <= S3Limits.maxParts else {
            let needed = (Int64(maxUploadBytes) + S3Limits.maxParts - 1) / S3Limits.maxParts
            throw ConfigurationError.invalid(
                key: "s3_multipart_part_bytes",
                reason:
                    "\(s3MultipartPartBytes) bytes makes \(parts) parts of a max_upload_bytes (\(maxUploadBytes)) upload; "
                    + "S3 allows 10,000: use at least \(needed)")
        }
    }

    /// The effective configuration as a config file, secrets masked: what `check-config` prints.
    public func rendered(maskingSecrets: Bool = true) -> String {
        var lines: [String] = []
        for key in ConfigurationKey.all {
            lines.append("# \(key.summary) (env \(key.environmentVariable))")
            if let value = key.render(self) {
                if key.isSecret && maskingSecrets {
                    lines.append("\(key.name) = \"********\"  # set, \(value.count - 2) characters")
                } else {
                    lines.append("\(key.name) = \(value)")
                }
            } else {
                lines.append("# \(key.name) = (not set)")
            }
        }
        lines += ViewDefinition.rendered(views)
        return lines.joined(separator: "\n") + "\n"
    }
}
