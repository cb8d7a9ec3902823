import Testing

@testable import HTTPServer

@Test
func requestIDs_CountInBase36_AfterTheServerPrefixAndLoopIndex() {
    var ids = HTTPRequestIDGenerator(serverPrefix: "k3x9-", loopIndex: 37)
    let first = (1...37).map { _ in ids.next() }
    #expect(first[0] == "k3x9-11.1")
    #expect(first[8] == "k3x9-11.9")
    #expect(first[9] == "k3x9-11.a")
    #expect(first[34] == "k3x9-11.z")
    #expect(first[35] == "k3x9-11.10")
    #expect(first[36] == "k3x9-11.11")
}

@Test
func requestIDs_AreUniqueWithinALoop_AndDifferBetweenLoops() {
    var loop0 = HTTPRequestIDGenerator(serverPrefix: "ab-", loopIndex: 0)
    var loop1 = HTTPRequestIDGenerator(serverPrefix: "ab-", loopIndex: 1)
    var seen = Set<String>()
    for _ in 0..<50_000 {
        seen.insert(loop0.next())
        seen.insert(loop1.next())
    }
    #expect(seen.count == 100_000)
    #expect(seen.allSatisfy { $0.hasPrefix("ab-0.") || $0.hasPrefix("ab-1.") })
}

@Test
func requestIDs_ServerPrefixIsFourBase36DigitsAtMostAndADash() {
    for _ in 0..<200 {
        let prefix = HTTPRequestIDGenerator.randomServerPrefix()
        #expect(prefix.hasSuffix("-"))
        let digits = prefix.dropLast()
        #expect((1...4).contains(digits.count))
        #expect(digits.allSatisfy { ("0"..."9").contains($0) || ("a"..."z").contains($0) })
    }
}
