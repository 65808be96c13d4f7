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
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: RFC3339Date.maximumCount) { buffer in
            let stamp = UnsafeBufferPointer(
                rebasing: buffer[..<RFC3339Date.write(Date(), to: buffer.baseAddress!, alwaysMillis: true)])
            record(event, stamp: stamp)
        }
    }

    /// Formats both lines in one pass over the fields, each string value scanned once for both, and hands them over.
    private func record(_ event: AuditEvent, stamp: UnsafeBufferPointer<UInt8>) {
        // Both lines start on the stack: they are handed over (copied into the writers' buffers) before this returns.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 576) { stack in
            record(
                event, stamp: stamp, lineSpace: UnsafeMutableBufferPointer(rebasing: stack[..<320]),
                textSpace: UnsafeMutableBufferPointer(rebasing: stack[320...]))
        }
    }

    private func record(
        _ event: AuditEvent, stamp: UnsafeBufferPointer<UInt8>, lineSpace: UnsafeMutableBufferPointer<UInt8>,
        textSpace: UnsafeMutableBufferPointer<UInt8>
    ) {
        let text = logger.format == .text
        let json = file != nil || !text
        // The audit file's line; its members are also the JSON log line's.
        var line = ByteWriter(startingIn: lineSpace)
        if json {
            line.append(#"{"ts":""#)
            line.append(stamp)
            line.append(0x22)
        }
        let membersStart = line.count
        var textLine = ByteWriter(startingIn: textSpace)
        if text {
            textLine.append(stamp)
            textLine.append(" INFO audit")
        }
        // The fields in the order lines show them: `event`, then `account`, `provider` and `end_user` where known,
        // `caller`, `request_id`, `outcome`, then the details; the fixed ones straight from the event, with no closure
        // and no `LogValue` per field on every token read.
        func string(_ field: AuditEvent.Field, _ value: String) {
            if json { line.append(field.json) }
            if text { textLine.append(field.text) }
            Self.append(string: value, json: &line, writingJSON: json, text: &textLine, writingText: text)
        }
        string(.event, event.kind.rawValue)
        if let account = event.account { string(.account, account) }
        if let provider = event.provider { string(.provider, provider) }
        if let endUser = event.endUser { string(.endUser, endUser) }
        string(.caller, event.caller)
        string(.requestID, event.requestID)
        string(.outcome, event.outcome)
        for (field, value) in event.details {
            if json { line.append(field.json) }
            if text { textLine.append(field.text) }
            Self.append(value, json: &line, writingJSON: json, text: &textLine, writingText: text)
        }
        line.append(0x7D)
        line.withBytes { fileLine in
            if let file { file.append(utf8: fileLine) }
            if text {
                textLine.withBytes { logger.writer.write(utf8: $0) }
            } else {
                var logLine = ByteWriter(capacity: fileLine.count + 40)
                logLine.append(#"{"ts":""#)
                logLine.append(stamp)
                logLine.append(#"","level":"info","msg":"audit""#)
                logLine.append(UnsafeBufferPointer(rebasing: fileLine[membersStart...]))
                logLine.withBytes { logger.writer.write(utf8: $0) }
            }
        }
    }

    /// Appends `value` as a JSON value to `json` and as a text value to `text` (the lines it is asked for), as
    /// ``LogValue/appendJSON(to:)`` and ``LogValue/appendText(to:)`` do, looking at a string's bytes once for both:
    /// plain ASCII, the usual case, is copied as it is.
    private static func append(
        _ value: LogValue, json: inout ByteWriter, writingJSON: Bool, text: inout ByteWriter, writingText: Bool
    ) {
        guard case .string(let string) = value else {
            if writingJSON { value.appendJSON(to: &json) }
            if writingText { value.appendText(to: &text) }
            return
        }
        append(string: string, json: &json, writingJSON: writingJSON, text: &text, writingText: writingText)
    }

    /// ``append(_:json:writingJSON:text:writingText:)`` for a string value.
    private static func append(
        string: String, json: inout ByteWriter, writingJSON: Bool, text: inout ByteWriter, writingText: Bool
    ) {
        var string = string
        let (jsonDone, textDone) = string.withUTF8 { utf8 -> (Bool, Bool) in
            // The usual value (an id, a name, a code) has none of the bytes either line treats specially: found so
            // eight bytes at a time, and copied as it is to both.
            if isPlain(utf8) {
                if writingJSON { json.append(quoting: utf8) }
                if writingText { text.append(utf8) }
                return (writingJSON, writingText)
            }
            // JSONString.appendQuoted escapes these; LogValue.appendText quotes for those, and for an empty value.
            var escapes = false
            var quotes = utf8.isEmpty
            var ascii = true
            for byte in utf8 {
                if byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F { escapes = true }
                if byte == 0x20 || byte == 0x22 || byte == 0x3D || (0x0A...0x0D).contains(byte) { quotes = true }
                if byte >= 0x80 { ascii = false }
            }
            let jsonDone = writingJSON && !escapes
            if jsonDone { json.append(quoting: utf8) }
            let textDone = writingText && !quotes && ascii
            if textDone { text.append(utf8) }
            return (jsonDone, textDone)
        }
        if writingJSON && !jsonDone { LogValue.string(string).appendJSON(to: &json) }
        if writingText && !textDone { LogValue.string(string).appendText(to: &text) }
    }

    /// Whether `utf8` is not empty and every byte is printable ASCII other than space, `"`, `=` and `\`: what
    /// neither line escapes or quotes (``append(_:json:writingJSON:text:writingText:)`` checks the same byte by byte).
    private static func isPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress, !utf8.isEmpty else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        // Hacker's Delight: a word has a zero byte, or a byte below n (n <= 128), exactly when these are non-zero.
        func hasZero(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
        var i = 0
        while i + 8 <= utf8.count {
            let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            if word & highs != 0 || (word &- ones &* 0x21) & ~word & highs != 0 || hasZero(word ^ (ones &* 0x22))
                || hasZero(word ^ (ones &* 0x3D)) || hasZero(word ^ (ones &* 0x5C)) || hasZero(word ^ (ones &* 0x7F))
            {
                return false
            }
            i += 8
        }
        while i < utf8.count {
            let byte = utf8[i]
            guard byte > 0x20, byte < 0x7F, byte != 0x22, byte != 0x3D, byte != 0x5C else { return false }
            i += 1
        }
        return true
    }

    /// Records an event about account `account`.
    func record(_ kind: AuditEvent.Kind, _ account: Account, caller: String, request: Request, outcome: String = "ok", scope: String? = nil)
    {
        record(kind, account, id: account.id, caller: caller, request: request, outcome: outcome, scope: scope)
    }

    /// Records an event about `account`, whose id the caller already holds as `id` (the same bytes as
    /// `account.id`, such as the id it was found by), so the id is not built again from its parts.
    func record(
        _ kind: AuditEvent.Kind, _ account: Account, id: String, caller: String, request: Request, outcome: String = "ok",
        scope: String? = nil
    ) {
        var event = AuditEvent(
            kind: kind, account: id, provider: account.provider, endUser: AuditEvent.endUser(of: account),
            caller: caller, requestID: request.id, outcome: outcome)
        if let scope { event.details.append((.scope, .string(scope))) }
        record(event)
    }

    /// Records an event about the account with id `id` that could not be read (its outcome is an error code).
    func record(_ kind: AuditEvent.Kind, accountID id: String, caller: String, request: Request, outcome: String, scope: String? = nil) {
        var event = AuditEvent(
            kind: kind, account: id, provider: AuditEvent.provider(ofAccountID: id), endUser: nil,
            caller: caller, requestID: request.id, outcome: outcome)
        if let scope { event.details.append((.scope, .string(scope))) }
        record(event)
    }

    /// Records a deletion: `account_revoked` first when the provider was asked to revoke (outcome `ok` or
    /// `revoke_failed`), then `account_deleted`.
    func recordDeletion(_ result: AccountService.DeletionResult, caller: String, request: Request, scope: String? = nil) {
        if let revoked = result.revoked {
            record(
                .accountRevoked, result.account, caller: caller, request: request, outcome: revoked ? "ok" : "revoke_failed", scope: scope)
        }
        record(.accountDeleted, result.account, caller: caller, request: request, scope: scope)
    }
}
