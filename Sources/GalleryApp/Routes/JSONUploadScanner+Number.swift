extension JSONUploadScanner {
    /// A JSON number read a byte at a time (RFC 8259 §6), checked when it ends as `ParseJSONParser`
    /// checks one: an Int64, or a finite double written in at most 400 characters. Holds at most
    /// 401 of its characters, however long it is.
    struct NumberReader {
        /// Why the number is refused.
        struct Invalid: Error, CustomStringConvertible {
            let description: String
        }

        private enum Part { case sign, intStart, zero, intDigits, fracStart, fracDigits, expSign, expStart, expDigits }

        private var part = Part.sign
        private var isInteger = true
        private var length = 0
        private var text: [UInt8] = []

        /// Takes `byte` when it continues the number (true); else checks the number it ends (false).
        mutating func read(_ byte: UInt8) throws -> Bool {
            let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            let next: Part?
            switch (part, byte) {
            case (.sign, UInt8(ascii: "-")): next = .intStart
            case (.sign, UInt8(ascii: "0")), (.intStart, UInt8(ascii: "0")): next = .zero
            case (.sign, _) where digit, (.intStart, _) where digit, (.intDigits, _) where digit: next = .intDigits
            case (.zero, UInt8(ascii: ".")), (.intDigits, UInt8(ascii: ".")): next = .fracStart
            case (.fracStart, _) where digit, (.fracDigits, _) where digit: next = .fracDigits
            case (.zero, UInt8(ascii: "e")), (.zero, UInt8(ascii: "E")), (.intDigits, UInt8(ascii: "e")),
                (.intDigits, UInt8(ascii: "E")), (.fracDigits, UInt8(ascii: "e")), (.fracDigits, UInt8(ascii: "E")):
                next = .expSign
            case (.expSign, UInt8(ascii: "+")), (.expSign, UInt8(ascii: "-")): next = .expStart
            case (.expSign, _) where digit, (.expStart, _) where digit, (.expDigits, _) where digit: next = .expDigits
            default: next = nil
            }
            if let next {
                if next == .fracStart || next == .expSign { isInteger = false }
                part = next
                length += 1
                if text.count <= 400 { text.append(byte) }
                return true
            }
            switch part {
            case .zero, .intDigits, .fracDigits, .expDigits: break
            default: throw Invalid(description: "invalid number")
            }
            let digits = String(decoding: text, as: UTF8.self)
            if !(isInteger && Int64(digits) != nil) {
                guard length <= 400, let value = Double(digits), value.isFinite else {
                    throw Invalid(description: "number out of range")
                }
            }
            return false
        }
    }
}
