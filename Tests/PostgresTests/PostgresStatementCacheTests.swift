import Testing

@testable import Postgres

/// The prepared-statement cache on its own, without a server: a name per SQL text and parameter
/// types, and the least recently used statement going first when it is full.
@Suite struct PostgresStatementCacheTests {
    @Test func cache_FindsAStatement_OnlyForItsSQLAndParameterTypes() throws {
        var cache = PostgresStatementCache(capacity: 4)
        let int = try PostgresParameters([1])
        let text = try PostgresParameters(["a"])
        #expect(cache.name(for: "select $1", int) == nil)
        let name = cache.nextName()
        cache.insert(name, sql: "select $1", types: int.types)
        #expect(cache.name(for: "select $1", int) == name)
        #expect(cache.name(for: "select $1", text) == nil, "other parameter types are another statement")
        #expect(cache.name(for: "select  $1", int) == nil)
        #expect(cache.count == 1)

        #expect(cache.remove("select $1", text) == nil)
        #expect(cache.remove("select $1", int) == name)
        #expect(cache.name(for: "select $1", int) == nil)
        #expect(cache.count == 0)
    }

    @Test func cache_EvictsTheLeastRecentlyUsed_OnlyWhenFull() throws {
        var cache = PostgresStatementCache(capacity: 2)
        let none = try PostgresParameters([])
        var names: [String: String] = [:]
        for sql in ["select 1", "select 2"] {
            #expect(cache.name(for: sql, none) == nil)
            #expect(cache.evictIfFull() == nil, "room left: nothing is evicted")
            let name = cache.nextName()
            cache.insert(name, sql: sql, types: none.types)
            names[sql] = name
        }
        // "select 1" is used again, so "select 2" is now the least recently used.
        #expect(cache.name(for: "select 1", none) == names["select 1"])
        #expect(cache.name(for: "select 3", none) == nil)
        #expect(cache.evictIfFull() == names["select 2"])
        #expect(cache.count == 1)
        #expect(cache.name(for: "select 2", none) == nil)
        let third = cache.nextName()
        #expect(!names.values.contains(third), "a name is never reused")
        cache.insert(third, sql: "select 3", types: none.types)
        #expect(cache.name(for: "select 1", none) == names["select 1"])

        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.name(for: "select 1", none) == nil)
    }
}
