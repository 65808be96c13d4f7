import BrokerCore
import BrokerHTTP
import Foundation

/// Records ``AuditEvent``s: one `audit` log line each, and with `BROKER_AUDIT_LOG` the same event as a
/// JSON line in the audit file.
///
/// An event is formatted once, straight into bytes (its fields as JSON members, shared by the file's line and a JSON
/// log line), and both lines go to buffers in memory whose writers run a few times a second (``LogWriter``,
/// ``AuditLogFile``): recording costs no system call and wakes no thread, however many tokens are read.
struct AuditTrail: Sendable {
    let logger: BrokerLogger
    /// The audit file; nil when `BROKER_AUDIT_LOG` is unset.
    let file: AuditLogFile?

    /// Records one event.
    func record(_ event: AuditEvent) {
        // Both lines are written into one buffer, the file's first; the timestamp is formatted once and copied.
        var line = ByteWriter(capacity: 512)
        var stamp = 0..<0
        if file != nil {
            line.append(#"{"ts":""#)
            stamp = Self.appendTimestamp(copying: stamp, to: &line)
            line.append(0x22)
            event.forEachField { key, value in Self.appendMember(key, value, to: &line) }
            line.append(0x7D)
        }
        let fileLineEnd = line.count
        switch logger.format {
        case .json:
            line.append(#"{"ts":""#)
            stamp = Self.appendTimestamp(copying: stamp, to: &line)
            line.append(#"","level":"info","msg":"audit""#)
            event.forEachField { key, value in Self.appendMember(key, value, to: &line) }
            line.append(0x7D)
        case .text:
            stamp = Self.appendTimestamp(copying: stamp, to: &line)
            line.append(" INFO audit")
            event.forEachField { key, value in
                line.append(0x20)
                line.append(key)
                line.append(0x3D)
                value.appendText(to: &line)
            }
        }
        line.withBytes { bytes in
            if let file { file.append(utf8: UnsafeBufferPointer(rebasing: bytes[..<fileLineEnd])) }
            logger.writer.write(utf8: UnsafeBufferPointer(rebasing: bytes[fileLineEnd...]))
        }
    }

    /// Appends `,"key":value`.
    private static func appendMember(_ key: String, _ value: LogValue, to line: inout ByteWriter) {
        line.append(#",""#)
        line.append(key)
        line.append(#"":"#)
        value.appendJSON(to: &line)
    }

    /// Appends the current time (RFC 3339, milliseconds), or a copy of the bytes at `earlier` in `line` when that
    /// holds one already; returns where the timestamp's bytes are.
    private static func appendTimestamp(copying earlier: Range<Int>, to line: inout ByteWriter) -> Range<Int> {
        let start = line.count
        line.write(atMost: RFC3339Date.maximumCount) { end in
            guard !earlier.isEmpty else { return RFC3339Date.write(Date(), to: end, alwaysMillis: true) }
            // `end` is the buffer's start plus `start`, after any growth this write needed.
            end.update(from: end - start + earlier.lowerBound, count: earlier.count)
            return earlier.count
        }
        return start..<line.count
    }

    /// Records an event about account `account`.
    func record(_ kind: AuditEvent.Kind, _ account: Account, caller: String, request: Request, outcome: String = "ok") {
        record(
            AuditEvent(
                kind: kind, account: account.id, provider: account.provider, endUser: AuditEvent.endUser(of: account),
                caller: caller, requestID: request.id, outcome: outcome))
    }

    /// Records an event about the account with id `id` that could not be read (its outcome is an error code).
    func record(_ kind: AuditEvent.Kind, accountID id: String, caller: String, request: Request, outcome: String) {
        record(
            AuditEvent(
                kind: kind, account: id, provider: AuditEvent.provider(ofAccountID: id), endUser: nil,
                caller: caller, requestID: request.id, outcome: outcome))
    }

    /// Records a deletion: `account_revoked` first when the provider was asked to revoke (outcome `ok` or
    /// `revoke_failed`), then `account_deleted`.
    func recordDeletion(_ result: AccountService.DeletionResult, caller: String, request: Request) {
        if let revoked = result.revoked {
            record(.accountRevoked, result.account, caller: caller, request: request, outcome: revoked ? "ok" : "revoke_failed")
        }
        record(.accountDeleted, result.account, caller: caller, request: request)
    }
}
