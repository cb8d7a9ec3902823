/// The translator of `ParseRegex.compile`: a JavaScript pattern re-emitted as a PostgreSQL ARE,
/// validated scalar by scalar.
extension ParseRegex {
    /// Re-emits a JavaScript pattern as a PostgreSQL ARE, validating as it goes.
    struct Translator {
        let scalars: [Unicode.Scalar]
        let extended: Bool
        let limits: ParseLimits
        var index = 0
        var output = ""

        /// What the last emitted item was, for quantifier checks.
        enum Last {
            case nothing, assertion, atom, quantified
            case group(quantified: Bool)
        }
        var last: Last = .nothing
        /// For each open group: whether it contains a quantifier, and whether it is a lookaround.
        var groups: [(quantified: Bool, lookaround: Bool)] = []

        init(scalars: [Unicode.Scalar], extended: Bool, limits: ParseLimits) {
            self.scalars = scalars
            self.extended = extended
            self.limits = limits
        }

        func fail(_ reason: String) -> ParseError { ParseError.invalidQuery("bad $regex: \(reason)") }

        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            index + offset < scalars.count ? scalars[index + offset] : nil
        }

        mutating func translate() throws -> String {
            while let scalar = peek() {
                index += 1
                if extended {
                    if scalar.properties.isWhitespace { continue }
                    if scalar == "#" {
                        while let next = peek(), next != "\n" { index += 1 }
                        continue
                    }
                }
                switch scalar {
                case "\\": try escape()
                case ".":
                    output += "."
                    last = .atom
                case "^", "$":
                    output.unicodeScalars.append(scalar)
                    last = .assertion
                case "|":
                    output += "|"
                    last = .nothing
                case "(": try openGroup()
                case ")":
                    guard let group = groups.popLast() else { throw fail("unbalanced parenthesis") }
                    output += ")"
                    if group.lookaround {
                        last = .assertion
                    } else {
                        last = .group(quantified: group.quantified)
                    }
                    if !groups.isEmpty && group.quantified { groups[groups.count - 1].quantified = true }
                case "*", "+", "?": try quantifier(String(scalar))
                case "{":
                    if let bound = try parseBound() {
                        try quantifier(bound)
                    } else {
                        output += "\\{"
                        last = .atom
                    }
                case "[": try bracket()
                case "]", "}":
                    output += "\\"
                    output.unicodeScalars.append(scalar)
                    last = .atom
                default:
                    output.unicodeScalars.append(scalar)
                    last = .atom
                }
            }
            guard groups.isEmpty else { throw fail("unbalanced parenthesis") }
            return output
        }

        mutating func openGroup() throws {
            var lookaround = false
            if peek() == "?" {
                switch (peek(1), peek(2)) {
                case (":", _):
                    output += "(?:"
                    index += 2
                case ("=", _), ("!", _):
                    output += "(?"
                    output.unicodeScalars.append(peek(1)!)
                    index += 2
                    lookaround = true
                case ("<", "="), ("<", "!"):
                    output += "(?<"
                    output.unicodeScalars.append(peek(2)!)
                    index += 3
                    lookaround = true
                default:
                    throw fail("unsupported group syntax (named groups and inline flags are not supported)")
                }
            } else {
                output += "("
            }
            groups.append((quantified: false, lookaround: lookaround))
            last = .nothing
        }

        /// Parses `{n}`, `{n,}` or `{n,m}` after the `{`; nil (nothing consumed) when the brace
        /// is not a valid bound, in which case JavaScript treats it as a literal.
        mutating func parseBound() throws -> String? {
            var cursor = index
            func digits() -> Int? {
                var value = 0
                var count = 0
                while cursor < scalars.count, ("0"..."9").contains(scalars[cursor]) {
                    value = min(value * 10 + Int(scalars[cursor].value - 48), 1_000_000)
                    count += 1
                    cursor += 1
                }
                return count > 0 ? value : nil
            }
            guard let low = digits() else { return nil }
            var high: Int? = low
            if cursor < scalars.count, scalars[cursor] == "," {
                cursor += 1
                high = digits()
            }
            guard cursor < scalars.count, scalars[cursor] == "}" else { return nil }
            index = cursor + 1
            guard low <= limits.maxRegexRepetition, (high ?? low) <= limits.maxRegexRepetition else {
                throw fail("repetition count above \(limits.maxRegexRepetition)")
            }
            if let high, high < low { throw fail("repetition range out of order") }
            if let high { return high == low ? "{\(low)}" : "{\(low),\(high)}" }
            return "{\(low),}"
        }

        mutating func quantifier(_ text: String) throws {
            switch last {
            case .atom: break
            case .group(let quantified):
                if quantified { throw fail("nested quantifiers are not allowed") }
            case .nothing, .assertion: throw fail("quantifier without something to repeat")
            case .quantified: throw fail("repeated quantifier")
            }
            output += text
            if peek() == "?" {
                output += "?"
                index += 1
            }
            last = .quantified
            if !groups.isEmpty { groups[groups.count - 1].quantified = true }
        }

        /// An escape outside brackets.
        mutating func escape() throws {
            guard let next = peek() else { throw fail("trailing backslash") }
            index += 1
            switch next {
            case "1"..."9": throw fail("backreferences are not allowed")
            case "0": throw fail("\\0 is not allowed")
            case "d", "D", "w", "W", "s", "S", "n", "r", "t", "f", "v":
                output += "\\"
                output.unicodeScalars.append(next)
                last = .atom
            case "b":
                output += "\\y"
                last = .assertion
            case "B":
                output += "\\Y"
                last = .assertion
            case "x", "u":
                output += try hexEscape(next)
                last = .atom
            case "Q":
                quoted()
            case "E":
                break  // a stray \E ends nothing (PCRE ignores it)
            default:
                try literalEscape(next)
                last = .atom
            }
        }

        /// `\Q…\E` (after the `\Q`): the text up to `\E`, or to the end, matched literally
        /// (PCRE and Java quoting, what the Parse SDKs' `hasPrefix`/`hasSuffix`/`containsString` send).
        mutating func quoted() {
            var emitted = false
            while let scalar = peek() {
                index += 1
                if scalar == "\\" && peek() == "E" {
                    index += 1
                    break
                }
                if scalar.isASCII && ParseRegex.isPunctuation(scalar) && scalar != " " { output += "\\" }
                output.unicodeScalars.append(scalar)
                emitted = true
            }
            if emitted { last = .atom }
        }

        mutating func literalEscape(_ scalar: Unicode.Scalar) throws {
            if scalar.isASCII {
                guard ParseRegex.isPunctuation(scalar) else { throw fail("unsupported escape \\\(scalar)") }
                output += "\\"
            }
            output.unicodeScalars.append(scalar)
        }

        /// `\xHH` or `\uHHHH`, re-emitted as `\uHHHH` (ARE's `\x` would swallow more digits).
        mutating func hexEscape(_ kind: Unicode.Scalar) throws -> String {
            let count = kind == "x" ? 2 : 4
            var value: UInt32 = 0
            for _ in 0..<count {
                guard let digit = peek(), let number = hexValue(digit) else {
                    throw fail("invalid \\\(kind) escape")
                }
                value = value << 4 | number
                index += 1
            }
            guard value != 0, Unicode.Scalar(value) != nil else { throw fail("invalid \\\(kind) escape") }
            let hex = String(value, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }

        func hexValue(_ scalar: Unicode.Scalar) -> UInt32? {
            switch scalar {
            case "0"..."9": return scalar.value - 48
            case "a"..."f": return scalar.value - 87
            case "A"..."F": return scalar.value - 55
            default: return nil
            }
        }

        /// A bracket expression `[...]`, after the `[`.
        mutating func bracket() throws {
            output += "["
            if peek() == "^" {
                output += "^"
                index += 1
            }
            guard let first = peek(), first != "]" else { throw fail("empty character class") }
            var previous: UInt32?  // the last single character, for range checks
            var pendingRange = false
            while let scalar = peek() {
                index += 1
                var single: UInt32?
                switch scalar {
                case "]":
                    guard !pendingRange else { throw fail("unterminated range in character class") }
                    output += "]"
                    last = .atom
                    return
                case "\\":
                    guard let next = peek() else { throw fail("trailing backslash") }
                    index += 1
                    switch next {
                    case "d", "w", "s":
                        guard !pendingRange else { throw fail("invalid range in character class") }
                        output += "\\"
                        output.unicodeScalars.append(next)
                    case "D", "W", "S": throw fail("\\\(next) is not supported inside a character class")
                    case "n":
                        output += "\\n"
                        single = 0x0A
                    case "r":
                        output += "\\r"
                        single = 0x0D
                    case "t":
                        output += "\\t"
                        single = 0x09
                    case "f":
                        output += "\\f"
                        single = 0x0C
                    case "v":
                        output += "\\v"
                        single = 0x0B
                    case "b":
                        output += "\\b"
                        single = 0x08
                    case "x", "u":
                        let escaped = try hexEscape(next)
                        output += escaped
                        single = UInt32(escaped.dropFirst(2), radix: 16)
                    default:
                        if next.isASCII {
                            guard ParseRegex.isPunctuation(next) else { throw fail("unsupported escape \\\(next)") }
                            output += "\\"
                        }
                        output.unicodeScalars.append(next)
                        single = next.value
                    }
                case "[":
                    if let next = peek(), next == ":" || next == "." || next == "=" {
                        throw fail("POSIX bracket syntax is not supported")
                    }
                    output += "\\["
                    single = scalar.value
                case "-":
                    if previous != nil && !pendingRange, let next = peek(), next != "]" {
                        output += "-"
                        pendingRange = true
                        continue
                    }
                    output += "\\-"
                    single = scalar.value
                default:
                    output.unicodeScalars.append(scalar)
                    single = scalar.value
                }
                if pendingRange {
                    guard let low = previous, let high = single, low <= high else {
                        throw fail("invalid range in character class")
                    }
                    pendingRange = false
                    previous = nil
                } else {
                    previous = single
                }
            }
            throw fail("unterminated character class")
        }
    }
}
