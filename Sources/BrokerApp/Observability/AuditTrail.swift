import BrokerCore
import BrokerHTTP
import Foundation

/// Records ``AuditEvent``s: one `audit` log line each, and with `BROKER_AUDIT_LOG` the same event as a
/// JSON line in the audit file.
///
/// Both go to buffers in memory (the log writer's and the file's); no event costs a system call of its own.
struct AuditTrail: Sendable {
    let logger: BrokerLogger
    /// The audit file; nil when `BROKER_AUDIT_LOG` is unset.
    let file: AuditLogFile?

    /// Records one event.
    func record(_ event: AuditEvent) {
        var fields: [(String, LogValue)] = [("event", .string(event.kind.rawValue))]
        if let account = event.account { fields.append(("account", .string(account))) }
        if let provider = event.provider { fields.append(("provider", .string(provider))) }
        if let endUser = event.endUser { fields.append(("end_user", .string(endUser))) }
        fields += [
            ("caller", .string(event.caller)), ("request_id", .string(event.requestID)), ("outcome", .string(event.outcome)),
        ]
        fields += event.details
        logger.log(.info, "audit", fields)
        guard let file else { return }
        var line = "{\"ts\":\"" + RFC3339Date.formatWithMillis(Date()) + "\""
        line.reserveCapacity(256)
        for (key, value) in fields {
            line += ",\""
            line += key
            line += "\":"
            value.appendJSON(to: &line)
        }
        line += "}"
        file.append(line)
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
