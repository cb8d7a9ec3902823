/// Text made safe for an XML 1.0 document, as element text or a quoted attribute value. One
/// escaper for every XML galleryd writes: the S3 client's request bodies, the bucket's S3 error
/// documents and the Flickr API's `format=rest` answers (it lives here, the lowest target that
/// writes XML, so the app uses it without a new dependency).
public enum XMLText {
    /// `text` with the five predefined entities escaped, tab and line breaks as character
    /// references (an attribute value keeps them: XML normalizes literal ones to spaces), and the
    /// characters XML 1.0 cannot carry (other controls, U+FFFE, U+FFFF) as U+FFFD.
    public static func escaped(_ text: String) -> String {
        // Most text (keys, ids, titles) needs nothing: returned whole, not scalar by scalar.
        // 0xEF leads U+FFFE and U+FFFF; 0x22 0x26 0x27 0x3C 0x3E are " & ' < >.
        if !text.utf8.contains(where: {
            $0 < 0x20 || $0 == 0x22 || $0 == 0x26 || $0 == 0x27 || $0 == 0x3C || $0 == 0x3E || $0 == 0xEF
        }) {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case "\t": out += "&#9;"
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
