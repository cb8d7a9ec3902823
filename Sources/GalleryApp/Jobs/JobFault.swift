import BlobStore
import Foundation
import Imaging
import Postgres

/// What kind of failure ended a processing attempt, which decides what the queue does next.
public enum JobFault: Sendable, Equatable {
    /// The photo itself is the problem (corrupt, truncated, unsupported, over a limit): decoding it
    /// again gives the same error, so the photo fails at once.
    case permanent
    /// The surroundings failed (full disk, I/O error, database or storage unavailable): the same
    /// photo will work once they recover, so the job backs off (up to minutes) and keeps trying for
    /// hours without using up its attempts.
    case transient
    /// Anything else: retried with backoff until the attempts run out.
    case retryable

    /// Classifies an error thrown while processing a photo.
    public static func classify(_ error: Error) -> JobFault {
        switch error {
        case let error as ImageError:
            if case .io = error { return .transient }
            return .permanent
        case let error as BlobStoreError:
            switch error {
            case .io, .insufficientStorage, .unavailable: return .transient
            // 5xx and 429 were already retried by the store; still the store's fault, not the photo's.
            case .remote(_, _, let status, _, _): return status >= 500 || status == 429 ? .transient : .retryable
            case .invalidKey, .notFound: return .retryable
            }
        case let error as PostgresError:
            return isTransient(error) ? .transient : .retryable
        case let error as NSError where error.domain == NSPOSIXErrorDomain:
            return [ENOSPC, EDQUOT, EIO, EAGAIN, ENOMEM].contains(Int32(error.code)) ? .transient : .retryable
        default:
            return .retryable
        }
    }

    /// Whether a database error says the database is unreachable, restarting or out of resources,
    /// rather than that the statement was wrong.
    static func isTransient(_ error: PostgresError) -> Bool {
        switch error {
        case .connectFailed, .connectionClosed, .poolTimeout:
            return true
        case .server(let state, _, _, _):
            // 08: connection exception; 53: insufficient resources (disk full, out of memory, too many
            // connections); 57P01-57P03: the server shutting down or starting; 40: serialization, deadlock.
            return ["08", "53", "40"].contains(String(state.errorClass))
                || state == .adminShutdown || state == .crashShutdown || state == .cannotConnectNow
        case .migrationFailed(_, let underlying):
            return isTransient(underlying)
        default:
            return false
        }
    }
}
