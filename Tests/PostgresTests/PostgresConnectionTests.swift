import Foundation
import Testing

@testable import Postgres

/// A single connection against the real server: binding, decoding, errors, the statement cache.
@Suite struct PostgresConnectionTests {
    static let awkwardStrings = [
        "", "plain", "héllo wörld", "🙂👍🏽 emoji", "漢字かなカナ", "עברית", "tab\there\nnewline",
        "'; drop table things; --", "Robert'); DROP TABLE students;--", "' OR ''='", "\\' or 1=1 --",
        "$1", "\"quoted\"", "back\\slash", "%_like_", "{a,b}", "NULL", "\u{7F}\u{1}",
    ]

    @Test func connect_Throws_WithLibpqMessage_WhenServerMissing() {
        #expect {
            try PostgresConnection(url: "postgresql://nobody@/nodb?host=/nonexistent-galleryd&port=1")
        } throws: { error in
            guard case PostgresError.connectFailed(let message) = error else { return false }
            return message.contains("/nonexistent-galleryd")
        }
    }

    @Test func session_UsesUTC() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            #expect(try connection.query("show timezone")[0].decode(String.self, 0) == "UTC")
        }
    }

    @Test func values_RoundTrip_ForEverySupportedType() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            try connection.execute(
                """
                create table v (id int primary key, s text, i bigint, i4 int, i2 smallint, d double precision,
                                b bool, ts timestamptz, tags text[], ids bigint[])
                """)
            let date = Date(timeIntervalSince1970: 1_700_000_000.123)
            let insert = "insert into v values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
            try connection.query(
                insert,
                [
                    1, "text 🙂", Int64.max, Int32.min, Int16.max, 0.1, true, date, ["a", "b,c", "\"", "NULL", ""],
                    [Int64.min, 0, 42],
                ])
            try connection.query(insert, [2, nil, nil, nil, nil, nil, nil, nil, nil, nil])
            try connection.query(
                insert,
                [
                    3, "", Int64.min, Int32.max, Int16.min, -1e-300, false, Date(timeIntervalSince1970: -86_400.5),
                    [String](), [Int64](),
                ])

            let rows = try connection.query("select * from v order by id")
            #expect(rows.count == 3)
            let first = rows[0]
            #expect(try first.decode(String.self, "s") == "text 🙂")
            #expect(try first.decode(Int64.self, "i") == .max)
            #expect(try first.decode(Int32.self, "i4") == .min)
            #expect(try first.decode(Int16.self, "i2") == .max)
            #expect(try first.decode(Int.self, "i4") == Int(Int32.min))
            #expect(try first.decode(Double.self, "d") == 0.1)
            #expect(try first.decode(Bool.self, "b") == true)
            #expect(try first.decode(Date.self, "ts") == date)
            #expect(try first.decode([String].self, "tags") == ["a", "b,c", "\"", "NULL", ""])
            #expect(try first.decode([Int64].self, "ids") == [.min, 0, 42])
            #expect(try first.decode([Int].self, "ids") == [Int(Int64.min), 0, 42])

            let nulls = rows[1]
            #expect(try nulls.decode(String?.self, "s") == nil)
            #expect(try nulls.decode(Int?.self, "i") == nil)
            #expect(try nulls.decode(Int64?.self, "i") == nil)
            #expect(try nulls.decode(Int32?.self, "i4") == nil)
            #expect(try nulls.decode(Double?.self, "d") == nil)
            #expect(try nulls.decode(Bool?.self, "b") == nil)
            #expect(try nulls.decode(Date?.self, "ts") == nil)
            #expect(try nulls.decode([String]?.self, "tags") == nil)
            #expect(try nulls.decode([Int64]?.self, "ids") == nil)
            #expect(try nulls.isNull("s"))

            let third = rows[2]
            #expect(try third.decode(String?.self, "s") == "")
            #expect(try third.decode(Int64.self, 2) == .min)
            #expect(try third.decode(Double.self, "d") == -1e-300)
            #expect(try third.decode(Bool.self, "b") == false)
            #expect(try third.decode(Date.self, "ts") == Date(timeIntervalSince1970: -86_400.5))
            #expect(try third.decode([String].self, "tags") == [])
            #expect(try third.decode([Int64].self, "ids") == [])
        }
    }

    @Test func text_RoundTrips_Verbatim_IncludingInjectionAttempts() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            try connection.execute(
                "create table things (id int primary key, name text not null, names text[] not null)")
            for (index, value) in Self.awkwardStrings.enumerated() {
                try connection.query(
                    "insert into things (id, name, names) values ($1, $2, $3)", [index, value, [value, value]])
            }
            let rows = try connection.query("select name, names from things order by id")
            #expect(try rows.map { try $0.decode(String.self, "name") } == Self.awkwardStrings)
            #expect(try rows.map { try $0.decode([String].self, "names") } == Self.awkwardStrings.map { [$0, $0] })
            // The table survived every "drop table".
            #expect(
                try connection.query("select count(*) from things")[0].decode(Int.self, 0) == Self.awkwardStrings.count)
            // And a value compared as a parameter matches only itself.
            #expect(
                try connection.query("select count(*) from things where name = $1", ["' OR ''='"])[0].decode(
                    Int.self, 0) == 1)
        }
    }

    @Test func dates_AreStoredAtMillisecondPrecision() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            let row = try connection.query(
                "select $1::timestamptz as t, $1::timestamptz::text as text, 'infinity'::timestamptz as inf, '2024-02-29'::date as day, '2024-02-29 10:00:00'::timestamp as local",
                [Date(timeIntervalSince1970: 1_709_642_096.78951)])[0]
            #expect(try row.decode(Date.self, "t") == Date(timeIntervalSince1970: 1_709_642_096.79))
            #expect(try row.decode(String.self, "text") == "2024-03-05 12:34:56.79+00")
            #expect(try row.decode(Date.self, "inf") == .distantFuture)
            #expect(try row.decode(Date.self, "day") == Date(timeIntervalSince1970: 1_709_164_800))
            #expect(try row.decode(Date.self, "local") == Date(timeIntervalSince1970: 1_709_200_800))
        }
    }

    @Test func doubles_RoundTripExactly() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            let values: [Double] = [
                0, -0.0, .pi, 1e308, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1.0 / 3, .infinity, -.infinity,
                123_456_789.123_456_79,
            ]
            for value in values {
                #expect(try connection.query("select $1::float8 as d", [value])[0].decode(Double.self, "d") == value)
            }
            #expect(try connection.query("select $1::float8 as d", [Double.nan])[0].decode(Double.self, "d").isNaN)
            #expect(try connection.query("select 1.25::numeric as n")[0].decode(Double.self, "n") == 1.25)
        }
    }

    @Test func decode_ThrowsTypeMismatch_WhenColumnTypeDiffers() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            let row = try connection.query(
                "select 1::int as n, 'x'::text as s, null::text as missing, 5000000000::bigint as big")[0]
            #expect {
                try row.decode(String.self, "n")
            } throws: { error in
                guard case PostgresError.typeMismatch(let column, let expected, let actual) = error else {
                    return false
                }
                return column == "n" && expected == "String" && actual == "integer"
            }
            #expect(throws: PostgresError.self) { try row.decode(Int.self, "s") }
            #expect(throws: PostgresError.self) { try row.decode(Date.self, "s") }
            #expect(throws: PostgresError.self) { try row.decode([String].self, "s") }
            #expect(throws: PostgresError.self) { try row.decode(Int32.self, "big") }
            #expect(throws: PostgresError.self) { try row.decode(Int.self, "nope") }
            #expect(throws: PostgresError.self) { try row.decode(Int.self, 9) }
            #expect {
                try row.decode(String.self, "missing")
            } throws: { error in
                guard case PostgresError.typeMismatch("missing", "String", "NULL") = error else { return false }
                return true
            }
            #expect(throws: PostgresError.self) {
                try connection.query("select array[null]::text[] as a")[0].decode([String].self, "a")
            }
        }
    }

    @Test func serverError_CarriesSQLStateAndConstraint_AndSessionSurvives() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            try connection.execute("create table u (k text constraint u_k_key unique)")
            try connection.query("insert into u values ($1)", ["a"])
            #expect {
                try connection.query("insert into u values ($1)", ["a"])
            } throws: { error in
                guard case PostgresError.server(let state, _, let detail, let constraint) = error else { return false }
                return state == .uniqueViolation && constraint == "u_k_key" && detail != nil
            }
            #expect { try connection.query("selec 1") } throws: { ($0 as? PostgresError)?.sqlState == .syntaxError }
            #expect { try connection.query("select 'abc'::int") } throws: {
                ($0 as? PostgresError)?.sqlState == .invalidTextRepresentation
            }
            #expect { try connection.query("select * from no_such_table") } throws: {
                ($0 as? PostgresError)?.sqlState == .undefinedTable
            }
            #expect(try connection.query("select count(*) from u")[0].decode(Int.self, 0) == 1)
        }
    }

    @Test func parameter_WithNULByte_IsRefused() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            #expect {
                try connection.query("select $1::text", ["ok", "a\u{0}b"])
            } throws: { error in
                guard case PostgresError.invalidParameter(1, _) = error else { return false }
                return true
            }
        }
    }

    @Test func affectedRows_CountsChangedRows() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            try connection.execute("create table n (i int)")
            #expect(try connection.query("insert into n select generate_series(1, $1)", [5]).affectedRows == 5)
            #expect(try connection.query("update n set i = i + 1 where i > $1", [2]).affectedRows == 3)
            #expect(try connection.query("delete from n").affectedRows == 5)
            #expect(try connection.query("select 1 where false").count == 0)
        }
    }

    @Test func statementCache_StaysWithinCapacity() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(
                url: url, settings: PostgresConnectionSettings(statementCacheCapacity: 3))
            for index in 0..<10 {
                #expect(try connection.query("select \(index) + $1 as n", [1])[0].decode(Int.self, "n") == index + 1)
            }
            #expect(connection.preparedStatementCount == 3)
            #expect(try connection.query("select count(*) from pg_prepared_statements")[0].decode(Int.self, 0) <= 3)
            // Same SQL, different parameter types: both work.
            #expect(try connection.query("select $1 as v", ["text"])[0].decode(String.self, "v") == "text")
            #expect(try connection.query("select $1 as v", [7])[0].decode(Int.self, "v") == 7)
        }
    }

    @Test func preparedStatement_IsReplaced_WhenTableChanges() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            try connection.execute("create table s (a int); insert into s values (1)")
            #expect(try connection.query("select * from s").columnNames == ["a"])
            try connection.execute("alter table s add column b int")
            #expect(try connection.query("select * from s").columnNames == ["a", "b"])
        }
    }

    @Test func execute_RunsSeveralStatements() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            try connection.execute("create table m (i int); insert into m values (1); insert into m values (2);")
            #expect(try connection.query("select sum(i) as s from m")[0].decode(Int.self, "s") == 3)
        }
    }

    @Test func statementTimeout_CancelsLongQueries() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(
                url: url, settings: PostgresConnectionSettings(statementTimeout: 0.05))
            #expect { try connection.query("select pg_sleep(5)") } throws: {
                ($0 as? PostgresError)?.sqlState == .queryCanceled
            }
            #expect(try connection.query("select 1 as one")[0].decode(Int.self, "one") == 1)
        }
    }
}
