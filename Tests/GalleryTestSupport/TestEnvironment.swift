import Foundation

/// What `make test` (scripts/test.sh) hands the tests through the environment: the throwaway
/// PostgreSQL cluster and the command that restarts it. Every test target reads them here, so a
/// missing variable fails the same way everywhere.
public enum TestEnvironment {
    /// `DATABASE_URL`: the cluster every database test derives its schema or database from.
    /// Throws (the test fails, it is not skipped) when it is unset or empty.
    public static func databaseURL() throws -> String {
        guard let url = value("DATABASE_URL") else {
            throw TestSetupError(
                description:
                    "DATABASE_URL is not set: run the tests with `make test` (scripts/test.sh), which starts PostgreSQL"
            )
        }
        return url
    }

    /// `GALLERYD_TEST_PGCTL`: the command that controls the test cluster (`… restart`, `stop`, `start`).
    public static func clusterControlCommand() throws -> String {
        guard let command = value("GALLERYD_TEST_PGCTL") else {
            throw TestSetupError(description: "GALLERYD_TEST_PGCTL must be set (make test sets it)")
        }
        return command
    }

    /// An environment variable, nil when unset or empty.
    public static func value(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}
