import Foundation

/// The kinds of setting the table `ConfigurationKey.all` is made of: how each reads its text and
/// prints its value.
extension ConfigurationKey {
    /// A text setting, checked by `validate` (a reason when the text is refused), under `env` when given.
    static func string(
        _ name: String, _ path: WritableKeyPath<GalleryConfiguration, String> & Sendable, env: String? = nil,
        _ summary: String, validate: (@Sendable (String) -> String?)? = nil
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, environmentVariable: env ?? "GALLERYD_" + name.uppercased(), summary: summary, isSecret: false,
            apply: { config, text in
                if let problem = validate?(text) {
                    throw ConfigurationError.invalidValue(key: name, value: text, reason: problem)
                }
                config[keyPath: path] = text
            },
            render: { ConfigurationFile.quote($0[keyPath: path]) })
    }

    /// A secret text setting: masked by `check-config`, unset when empty.
    static func secret(
        _ name: String, _ path: WritableKeyPath<GalleryConfiguration, String?> & Sendable, _ summary: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, environmentVariable: "GALLERYD_" + name.uppercased(), summary: summary, isSecret: true,
            apply: { config, text in config[keyPath: path] = text.isEmpty ? nil : text },
            render: { $0[keyPath: path].map(ConfigurationFile.quote) })
    }

    /// An integer setting within `range` (`_` may group digits).
    static func int(
        _ name: String, _ path: WritableKeyPath<GalleryConfiguration, Int> & Sendable, _ summary: String,
        range: ClosedRange<Int>
    ) -> ConfigurationKey {
        number(name, path, summary, range: range, kind: "an integer") {
            Int($0.replacingOccurrences(of: "_", with: ""))
        }
    }

    /// A boolean setting: true/1/yes/on or false/0/no/off, any case.
    static func bool(
        _ name: String, _ path: WritableKeyPath<GalleryConfiguration, Bool> & Sendable, _ summary: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, environmentVariable: "GALLERYD_" + name.uppercased(), summary: summary, isSecret: false,
            apply: { config, text in
                switch text.lowercased() {
                case "true", "1", "yes", "on": config[keyPath: path] = true
                case "false", "0", "no", "off": config[keyPath: path] = false
                default:
                    throw ConfigurationError.invalidValue(
                        key: name, value: text, reason: "not a boolean (true or false)")
                }
            },
            render: { $0[keyPath: path] ? "true" : "false" })
    }

    /// A finite number within `range`.
    static func double(
        _ name: String, _ path: WritableKeyPath<GalleryConfiguration, Double> & Sendable, _ summary: String,
        range: ClosedRange<Double>
    ) -> ConfigurationKey {
        number(name, path, summary, range: range, kind: "a number") { Double($0).flatMap { $0.isFinite ? $0 : nil } }
    }

    /// A numeric setting within `range`, whose text `parse` reads (nil: the text is not `kind`).
    private static func number<Value: Comparable & LosslessStringConvertible & Sendable>(
        _ name: String, _ path: WritableKeyPath<GalleryConfiguration, Value> & Sendable, _ summary: String,
        range: ClosedRange<Value>, kind: String, parse: @escaping @Sendable (String) -> Value?
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, environmentVariable: "GALLERYD_" + name.uppercased(), summary: summary, isSecret: false,
            apply: { config, text in
                guard let value = parse(text) else {
                    throw ConfigurationError.invalidValue(key: name, value: text, reason: "not \(kind)")
                }
                guard range.contains(value) else {
                    throw ConfigurationError.invalidValue(
                        key: name, value: text, reason: "must be between \(range.lowerBound) and \(range.upperBound)")
                }
                config[keyPath: path] = value
            },
            render: { String($0[keyPath: path]) })
    }
}
