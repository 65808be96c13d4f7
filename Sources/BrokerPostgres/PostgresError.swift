/// Why a PostgreSQL call failed; messages name the server and the problem, never a password or a bound value.
public enum PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No usable server could be reached: refused, unresolvable, timed out at connect, or none of the hosts
    /// is read-write when `target_session_attrs=read-write` asks for it.
    case unavailable(String)
    /// The connection broke while in use (reset, closed, or the server crashed); the outcome of a write in flight
    /// is unknown. The pool opens a new connection for the next call.
    case connectionLost(String)
    /// The server refused the login (SQLSTATE 28P01 invalid password, 28000 no `pg_hba.conf` entry, …).
    case authenticationFailed(PostgresServerError)
    /// The server asked for a login method this client refuses or does not speak (cleartext `password`, `md5`
    /// unless allowed, GSSAPI, a SASL mechanism other than SCRAM-SHA-256), or its SCRAM proof was wrong.
    case authenticationRefused(String)
    /// The call's deadline passed. With `cancelled`, a CancelRequest stopped the statement and the connection
    /// stays usable; without, the connection was closed.
    case deadlineExceeded(cancelled: Bool)
    /// The calling task was cancelled. With `stopped`, the statement (if one ran) was stopped with a CancelRequest
    /// and the connection stays usable; without, the connection was closed.
    case cancelled(stopped: Bool)
    /// No pooled connection became free before the deadline.
    case poolExhausted
    /// SQLSTATE 23505: a unique or primary-key constraint refused the row.
    case uniqueViolation(PostgresServerError)
    /// SQLSTATE 40001 (serialization failure) or 40P01 (deadlock detected): retrying the transaction may succeed.
    case serializationFailure(PostgresServerError)
    /// SQLSTATE 25006: a write on a read-only transaction, which is how a standby answers one.
    case readOnly(PostgresServerError)
    /// SQLSTATE 57P01, 57P02 or 57P03: the server is shutting down, crashed, or not accepting connections yet.
    case serverShutdown(PostgresServerError)
    /// SQLSTATE 57014: the statement was cancelled (by a CancelRequest or `statement_timeout`).
    case queryCancelled(PostgresServerError)
    /// Any other ErrorResponse.
    case server(PostgresServerError)
    /// The server sent bytes that break protocol 3.0 (a bad length, an unexpected message); the connection was closed.
    case protocolError(String)
    /// The configuration cannot be used, such as an unsupported `sslmode`.
    case configuration(String)

    /// The typed error for an ErrorResponse, by its SQLSTATE (PostgreSQL's errcodes appendix).
    public static func from(_ error: PostgresServerError) -> PostgresError {
        switch error.code {
        case "23505": return .uniqueViolation(error)
        case "40001", "40P01": return .serializationFailure(error)
        case "25006": return .readOnly(error)
        case "57P01", "57P02", "57P03": return .serverShutdown(error)
        case "57014": return .queryCancelled(error)
        case "28P01", "28000": return .authenticationFailed(error)
        default: return .server(error)
        }
    }

    /// Whether the connection this error came from must not be reused (the stream may be out of step or gone).
    var closesConnection: Bool {
        switch self {
        case .unavailable, .connectionLost, .protocolError, .authenticationFailed, .authenticationRefused, .serverShutdown,
            .configuration:
            return true
        case .deadlineExceeded(let cancelled):
            return !cancelled
        case .cancelled(let stopped):
            return !stopped
        case .poolExhausted, .uniqueViolation, .serializationFailure, .readOnly, .queryCancelled, .server:
            return false
        }
    }

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .unavailable(let message): return "postgres unavailable: \(message)"
        case .connectionLost(let message): return "postgres connection lost: \(message)"
        case .authenticationFailed(let error): return "postgres refused the login: \(error)"
        case .authenticationRefused(let message): return "postgres login refused by the client: \(message)"
        case .deadlineExceeded(let cancelled):
            return cancelled ? "postgres statement cancelled at its deadline" : "postgres did not answer before the deadline"
        case .cancelled: return "postgres statement abandoned: its task was cancelled"
        case .poolExhausted: return "no postgres connection became free before the deadline"
        case .uniqueViolation(let error): return "postgres unique violation: \(error)"
        case .serializationFailure(let error): return "postgres serialization failure: \(error)"
        case .readOnly(let error): return "postgres is read-only here (a standby?): \(error)"
        case .serverShutdown(let error): return "postgres is shutting down or restarting: \(error)"
        case .queryCancelled(let error): return "postgres cancelled the statement: \(error)"
        case .server(let error): return "postgres error: \(error)"
        case .protocolError(let message): return "postgres protocol error: \(message)"
        case .configuration(let message): return "postgres configuration: \(message)"
        }
    }
}

/// The fields of an ErrorResponse or NoticeResponse (protocol 3.0, "Error and Notice Message Fields").
///
/// Its description holds the severity, the SQLSTATE and the primary message only: the detail may quote
/// row values (`Key (id)=(…) already exists`), so it is kept for code to read, never printed.
public struct PostgresServerError: Sendable, Equatable, CustomStringConvertible {
    /// `V`: the severity, never localized (ERROR, FATAL, PANIC, WARNING, NOTICE, …); `S` on servers before 9.6.
    public var severity: String
    /// `C`: the SQLSTATE code, such as `23505`.
    public var code: String
    /// `M`: the primary message.
    public var message: String
    /// `D`: the detail, which may quote values.
    public var detail: String?
    /// `H`: the hint.
    public var hint: String?
    /// `n`: the constraint's name, for integrity violations.
    public var constraint: String?
    /// `t`: the table's name.
    public var table: String?

    /// Creates the fields; unknown codes are ignored by the parser.
    public init(
        severity: String, code: String, message: String, detail: String? = nil, hint: String? = nil, constraint: String? = nil,
        table: String? = nil
    ) {
        self.severity = severity
        self.code = code
        self.message = message
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.table = table
    }

    /// Whether the server ends the session after sending it (FATAL or PANIC).
    public var isFatal: Bool { severity == "FATAL" || severity == "PANIC" }

    /// `SEVERITY CODE: message`.
    public var description: String { "\(severity) \(code): \(message)" }
}
