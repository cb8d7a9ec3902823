/// Turns a client's `$regex` (JavaScript/MongoDB syntax, as Parse SDKs send it) into something
/// safe for PostgreSQL: an anchored literal prefix becomes a range `>= prefix and < upper bound`
/// in byte order (served by the `text_pattern_ops` index, also from a generic plan); anything else is re-emitted as a PostgreSQL ARE. Only a known
/// subset is accepted, so the pattern never fails to compile in the database and cannot blow up:
/// backreferences, nested quantifiers, large repetition counts, named groups, Unicode property
/// escapes and POSIX bracket syntax are rejected with 102.
public enum ParseRegex {
    /// What a `$regex` compiles to.
    public enum Compiled: Equatable, Sendable {
        /// Match values starting with this literal text.
        case prefix(String)
        /// Match with this ARE pattern (`~`, or `~*` when case-insensitive).
        case pattern(String, caseInsensitive: Bool)
    }

    /// Compiles `pattern` with MongoDB `$options` (`i`, `m`, `x`, `s`).
    public static func compile(_ pattern: String, options: String, limits: ParseLimits) throws -> Compiled {
        guard pattern.utf8.count <= limits.maxRegexLength else {
            throw ParseError.invalidQuery("bad $regex: longer than \(limits.maxRegexLength) bytes")
        }
        guard !pattern.unicodeScalars.contains("\u{0}") else {
            throw ParseError.invalidQuery("bad $regex: contains NUL")
        }
        var caseInsensitive = false
        var multiline = false
        var extended = false
        var dotAll = false
        for option in options {
            switch option {
            case "i": caseInsensitive = true
            case "m": multiline = true
            case "x": extended = true
            case "s": dotAll = true
            default: throw ParseError.invalidQuery("bad $options: only i, m, x and s are supported")
            }
        }
        if !caseInsensitive && !multiline && !extended, let prefix = literalPrefix(pattern) {
            return .prefix(prefix)
        }
        var translator = Translator(scalars: Array(pattern.unicodeScalars), extended: extended, limits: limits)
        let body = try translator.translate()
        // JavaScript's `.` stops at newlines unless `s`; `^`/`$` match at lines only with `m`.
        let embedded: String
        switch (multiline, dotAll) {
        case (false, false): embedded = "(?p)"
        case (false, true): embedded = ""
        case (true, false): embedded = "(?n)"
        case (true, true): embedded = "(?w)"
        }
        return .pattern(embedded + body, caseInsensitive: caseInsensitive)
    }

    /// `^literal` with only literal characters (backslash-escaped punctuation, or text quoted
    /// between `\Q` and `\E` as the Parse SDKs' `hasPrefix` sends it) after the anchor: the
    /// literal text; otherwise nil.
    static func literalPrefix(_ pattern: String) -> String? {
        var scalars = pattern.unicodeScalars.makeIterator()
        guard scalars.next() == "^" else { return nil }
        var prefix = String.UnicodeScalarView()
        while let scalar = scalars.next() {
            if scalar == "\\" {
                guard let escaped = scalars.next(), escaped.isASCII else { return nil }
                if escaped == "Q" {
                    // Everything up to `\E` (or the end) is literal.
                    while let quoted = scalars.next() {
                        if quoted == "\\" {
                            var lookahead = scalars
                            if lookahead.next() == "E" {
                                scalars = lookahead
                                break
                            }
                        }
                        prefix.append(quoted)
                    }
                    continue
                }
                if escaped == "E" { continue }  // a stray \E ends nothing (PCRE ignores it)
                guard isPunctuation(escaped) else { return nil }
                prefix.append(escaped)
            } else if scalar.isASCII && "\\.^$|?*+()[]{}".unicodeScalars.contains(scalar) {
                return nil
            } else {
                prefix.append(scalar)
            }
        }
        return String(prefix)
    }

    static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII
            && !(("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar))
            && scalar.value >= 0x20
    }

    /// The smallest string greater than every string that starts with `prefix`, in code point
    /// order (which is UTF-8 byte order, the order of `text_pattern_ops` and its `~<~` operators):
    /// `prefix` with trailing U+10FFFF dropped and its last scalar incremented (skipping the
    /// surrogates). Nil when there is none (an empty prefix, or only U+10FFFF): then every
    /// string at or above `prefix` matches.
    public static func prefixUpperBound(_ prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.last, last.value == 0x10FFFF { scalars.removeLast() }
        guard let last = scalars.popLast() else { return nil }
        let next = last.value == 0xD7FF ? 0xE000 : last.value + 1
        scalars.append(Unicode.Scalar(next)!)
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    /// Escapes `%`, `_` and `\` so `text` is matched literally by `LIKE`, and appends `%`.
    public static func likePattern(forPrefix text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count + 1)
        for character in text.unicodeScalars {
            if character == "%" || character == "_" || character == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(character)
        }
        out += "%"
        return out
    }
}
