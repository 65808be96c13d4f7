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
        var timestamp: [UInt8] = []
        timestamp.reserveCapacity(24)
        RFC3339Date.append(Date(), to: &timestamp, alwaysMillis: true)
        var line: [UInt8] = []
        line.reserveCapacity(320)
        if let file {
            line.append(contentsOf: #"{"ts":""#.utf8)
            line.append(contentsOf: timestamp)
            line.append(0x22)
            event.forEachField { key, value in Self.appendMember(key, value, to: &line) }
            line.append(0x7D)
            line.withUnsafeBufferPointer { file.append(utf8: $0) }
            line.removeAll(keepingCapacity: true)
        }
        switch logger.format {
        case .json:
            line.append(contentsOf: #"{"ts":""#.utf8)
            line.append(contentsOf: timestamp)
            line.append(contentsOf: #"","level":"info","msg":"audit""#.utf8)
            event.forEachField { key, value in Self.appendMember(key, value, to: &line) }
            line.append(0x7D)
        case .text:
            line.append(contentsOf: timestamp)
            line.append(contentsOf: " INFO audit".utf8)
            event.forEachField { key, value in
                line.append(0x20)
                line.append(contentsOf: key.utf8)
                line.append(0x3D)
                value.appendText(to: &line)
            }
        }
        line.withUnsafeBufferPointer { logger.writer.write(utf8: $0) }
    }

    /// Appends `,"key":value`.
    private static func appendMember(_ key: String, _ value: LogValue, to line: inout [UInt8]) {
        line.append(contentsOf: #",""#.utf8)
        line.append(contentsOf: key.utf8)
        line.append(contentsOf: #"":"#.utf8)
        value.appendJSON(to: &line)
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
