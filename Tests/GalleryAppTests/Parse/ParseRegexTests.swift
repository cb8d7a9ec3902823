import Testing

@testable import GalleryApp

/// `$regex` translation: prefixes to LIKE, the rest to bounded PostgreSQL AREs.
@Suite struct ParseRegexTests {
    private func compile(_ pattern: String, _ options: String = "") throws -> ParseRegex.Compiled {
        try ParseRegex.compile(pattern, options: options, limits: ParseLimits())
    }

    @Test func regex_FindsLiteralPrefixes() throws {
        #expect(try compile("^IMG_") == .prefix("IMG_"))
        #expect(try compile("^a\\.b") == .prefix("a.b"))
        #expect(try compile("^été") == .prefix("été"))
        #expect(try compile("^IMG", "i") == .pattern("(?p)^IMG", caseInsensitive: true))
        #expect(try compile("^IMG", "m") == .pattern("(?n)^IMG", caseInsensitive: false))
        #expect(try compile("^IMG.*") == .pattern("(?p)^IMG.*", caseInsensitive: false))
        #expect(try compile("^a\\d") == .pattern("(?p)^a\\d", caseInsensitive: false))
    }

    @Test func regex_QuotesTextBetweenQAndE_AsTheSDKsSendIt() throws {
        #expect(try compile("^\\QFlower\\E") == .prefix("Flower"))
        #expect(try compile("^\\Qa.b*(c)\\E") == .prefix("a.b*(c)"))
        #expect(try compile("^\\Qopen ended") == .prefix("open ended"))
        #expect(try compile("^\\QIMG_\\E\\.") == .prefix("IMG_."))
        #expect(try compile("^\\Qa\\b\\E") == .prefix("a\\b"))
        #expect(try compile("\\QFlower\\E$") == .pattern("(?p)Flower$", caseInsensitive: false))
        #expect(try compile("\\Qa.b(\\E", "i") == .pattern("(?p)a\\.b\\(", caseInsensitive: true))
        #expect(try compile("\\Qab\\E+") == .pattern("(?p)ab+", caseInsensitive: false))
        #expect(try compile("^\\Q\\E\\d") == .pattern("(?p)^\\d", caseInsensitive: false))
        #expect(throws: ParseError.self) { try compile("\\Q\\E+") }
    }

    @Test func regex_EscapesLikeMetacharacters() {
        #expect(ParseRegex.likePattern(forPrefix: "50%_\\x") == "50\\%\\_\\\\x%")
        #expect(ParseRegex.likePattern(forPrefix: "") == "%")
    }

    @Test func regex_PrefixUpperBound_IsTheNextStringInCodePointOrder() {
        #expect(ParseRegex.prefixUpperBound("abc") == "abd")
        #expect(ParseRegex.prefixUpperBound("a\u{7F}") == "a\u{80}")
        #expect(ParseRegex.prefixUpperBound("é") == "ê")
        #expect(ParseRegex.prefixUpperBound("a\u{D7FF}") == "a\u{E000}")
        #expect(ParseRegex.prefixUpperBound("ab\u{10FFFF}\u{10FFFF}") == "ac")
        #expect(ParseRegex.prefixUpperBound("\u{10FFFF}") == nil)
        #expect(ParseRegex.prefixUpperBound("") == nil)
    }

    @Test func regex_TranslatesJavaScriptSyntax() throws {
        #expect(try compile("\\bcat\\B") == .pattern("(?p)\\ycat\\Y", caseInsensitive: false))
        #expect(try compile("\\x41\\u00e9") == .pattern("(?p)\\u0041\\u00e9", caseInsensitive: false))
        #expect(try compile("[a-z\\d_-]+") == .pattern("(?p)[a-z\\d_\\-]+", caseInsensitive: false))
        #expect(try compile("a{2,3}?(?:b|c)*") == .pattern("(?p)a{2,3}?(?:b|c)*", caseInsensitive: false))
        #expect(try compile("x{,2}") == .pattern("(?p)x\\{,2\\}", caseInsensitive: false))
        #expect(try compile("a(?=b)(?!c)") == .pattern("(?p)a(?=b)(?!c)", caseInsensitive: false))
        #expect(try compile("[[]]") == .pattern("(?p)[\\[]\\]", caseInsensitive: false))
        #expect(try compile("", "s") == .pattern("", caseInsensitive: false))
    }

    @Test func regex_RejectsDangerousOrUnsupportedConstructs_With102() {
        let bad = [
            "(a)\\1", "(a+)+", "(a*)*b", "((a|b)+)*", "a{1000}", "a{3,2}", "(?<name>a)", "(?i)a", "\\p{L}", "\\k<a>",
            "[[:alpha:]]",
            "[z-a]", "[]", "[^]", "(a", "a)", "*a", "a**", "^*", "\\", "[a", "\\0", "\\q", "[\\W]", "(?=a)+",
        ]
        for pattern in bad {
            #expect(parseErrorCode { _ = try compile(pattern) } == 102, "\(pattern)")
        }
        #expect(parseErrorCode { _ = try compile(String(repeating: "a", count: 257)) } == 102)
        #expect(parseErrorCode { _ = try compile("a", "g") } == 102)
    }
}
