import Foundation

/// A file lock that every database test holds shared and the test that restarts the cluster holds
/// exclusively, so no test loses its connection mid-way. The lock file is named after
/// `DATABASE_URL` (`/tmp/galleryd-test-cluster-<FNV-1a of the URL>.lock`), so every test target and
/// every test process of one run takes the same lock. There is one copy of this code on purpose:
/// if two copies named the file differently, the restart test would stop protecting the other
/// suites without any test failing.
public enum ClusterLock {
    /// Runs `body` while holding the lock shared.
    public static func shared<T>(_ body: () throws -> T) throws -> T {
        let held = try acquire(exclusive: false)
        defer { held.release() }
        return try body()
    }

    /// Runs `body` while holding the lock exclusively (waits for every shared holder).
    public static func exclusive<T>(_ body: () throws -> T) throws -> T {
        let held = try acquire(exclusive: true)
        defer { held.release() }
        return try body()
    }

    /// Takes the lock and returns it held, for owners whose lifetime is not one closure (a test
    /// server holds it from start to stop). Release it with `release()`.
    public static func acquire(exclusive: Bool = false) throws -> ClusterLockHold {
        ClusterLockHold(fileDescriptor: try acquireFileDescriptor(exclusive: exclusive))
    }

    /// Takes the lock and returns the open lock file; closing it (`close(fd)`) releases the lock.
    public static func acquireFileDescriptor(exclusive: Bool = false) throws -> Int32 {
        let path = try path()
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw TestSetupError(description: "cannot open the cluster lock \(path): errno \(errno)") }
        while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            guard errno == EINTR else {
                let failure = errno
                close(fd)
                throw TestSetupError(description: "flock \(path): errno \(failure)")
            }
        }
        return fd
    }

    /// `/tmp/galleryd-test-cluster-<FNV-1a of DATABASE_URL in hex>.lock`.
    public static func path() throws -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in try TestEnvironment.databaseURL().utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "/tmp/galleryd-test-cluster-\(String(hash, radix: 16)).lock"
    }
}
