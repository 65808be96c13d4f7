import BrokerCore
import BrokerHTTP
import Foundation
import Synchronization

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

    /// The time stamps' dates and times to the second, kept from one event to the next (``SecondStamps``).
    let stamps = SecondStamps()

    /// The fields an event about one account opens with (`event`, `account`, `provider` and `end_user` where known),
    /// as each kind of line writes them: made once per account (``AccountRenderCache`` keeps a token read's), so
    /// that recording such an event copies them instead of scanning and escaping four values again.
    struct Opening: Sendable {
        /// `,"event":…` to the last of these fields, for a JSON line.
        let json: [UInt8]
        /// ` event=…` to the last of these fields, for a text line.
        let text: [UInt8]

        /// The opening fields of a `kind` event about the account `account` of `provider` and `endUser`, written
        /// exactly as ``AuditTrail/record(_:)`` writes them from an ``AuditEvent``.
        init(_ kind: AuditEvent.Kind, account: String, provider: String, endUser: String?) {
            var json = ByteWriter(capacity: 128)
            var text = ByteWriter(capacity: 128)
            Self.field(.event, kind.rawValue, json: &json, text: &text)
            Self.field(.account, account, json: &json, text: &text)
            Self.field(.provider, provider, json: &json, text: &text)
            if let endUser { Self.field(.endUser, endUser, json: &json, text: &text) }
            self.json = json.bytes
            self.text = text.bytes
        }

        /// The fields as ``init(_:account:provider:endUser:)`` wrote them: `json` for a JSON line, `text` for a text line.
        init(json: [UInt8], text: [UInt8]) {
            self.json = json
            self.text = text
        }

        /// Appends one field to both lines, as ``AuditTrail/record(_:)`` writes it.
        private static func field(_ field: AuditEvent.Field, _ value: String, json: inout ByteWriter, text: inout ByteWriter) {
            json.append(field.json)
            text.append(field.text)
            AuditTrail.append(string: value, json: &json, writingJSON: true, text: &text, writingText: true)
        }
    }

    /// The `caller` field as each kind of line writes it, for one caller's name: made once per API key
    /// (``AccessControl/Caller``), so that a token read copies it instead of scanning and escaping the name again.
    struct CallerField: Sendable {
        /// `,"caller":…`, for a JSON line.
        let json: [UInt8]
        /// ` caller=…`, for a text line.
        let text: [UInt8]

        /// The field for `name`, written exactly as ``AuditTrail/record(_:)`` writes an event's caller.
        init(_ name: String) {
            var json = ByteWriter(capacity: 64)
            var text = ByteWriter(capacity: 64)
            json.append(AuditEvent.Field.caller.json)
            text.append(AuditEvent.Field.caller.text)
            AuditTrail.append(string: name, json: &json, writingJSON: true, text: &text, writingText: true)
            self.json = json.bytes
            self.text = text.bytes
        }
    }

    /// Records one event.
    func record(_ event: AuditEvent) {
        record(.event(event), requestID: event.requestID)
    }

    /// Records a token read (outcome `ok`) of the account whose opening fields are `opening`
    /// (``Opening/init(_:account:provider:endUser:)`` of `.tokenRead` and the account's id, provider and end user):
    /// the same lines as ``record(_:_:id:caller:request:outcome:scope:)`` writes for it.
    func recordTokenRead(_ opening: Opening, caller: CallerField, request: Request, scope: String?) {
        opening.json.withUnsafeBufferPointer { json in
            opening.text.withUnsafeBufferPointer { text in
                recordTokenRead(openingJSON: json, openingText: text, caller: caller, request: request, scope: scope)
            }
        }
    }

    /// ``recordTokenRead(_:caller:request:scope:)`` of an opening whose fields are these bytes (an
    /// ``AccountRenderCache/Entry``'s, which it holds beside its parts).
    func recordTokenRead(
        openingJSON json: UnsafeBufferPointer<UInt8>, openingText text: UnsafeBufferPointer<UInt8>, caller: CallerField,
        request: Request, scope: String?
    ) {
        // No ``AuditEvent`` is built (and destroyed) for it: its fields go to the lines as they are.
        record(.opening(json: json, text: text, caller: caller, scope: scope), requestID: request.id)
    }

    /// Records a proxied call's `proxy_call` event: the same lines as ``record(_:)`` writes for an ``AuditEvent`` of
    /// kind `.proxyCall` with these fields and details, with no event and no details array built (and destroyed) on
    /// every call.
    func recordProxyCall(_ call: ProxyCallEntry) {
        record(.proxyCall(call), requestID: call.requestID)
    }

    /// A `proxy_call` event's fields, in the order its lines write them.
    struct ProxyCallEntry {
        var account: String
        var provider: String?
        var endUser: String?
        var caller: String
        var requestID: String
        var outcome: String
        var method: String
        var host: String?
        var path: String
        var status: Int?
        var bytesSent: Int
        var bytesReceived: Int
        var durationMS: Double
    }

    /// What an event's lines say besides its caller and request id: the event's own fields, a token read's kept
    /// opening fields and the scope it used (outcome `ok`), or a proxied call's fields.
    private enum Content {
        case event(AuditEvent)
        case opening(json: UnsafeBufferPointer<UInt8>, text: UnsafeBufferPointer<UInt8>, caller: CallerField, scope: String?)
        case proxyCall(ProxyCallEntry)
    }

    /// Records an event with this content and request id.
    private func record(_ content: Content, requestID: String) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: RFC3339Date.maximumCount) { buffer in
            let stamp = UnsafeBufferPointer(rebasing: buffer[..<stamps.write(Date(), to: buffer.baseAddress!)])
            record(content, requestID: requestID, stamp: stamp)
        }
    }

    /// Formats both lines in one pass over the fields, each string value scanned once for both, and hands them over.
    private func record(_ content: Content, requestID: String, stamp: UnsafeBufferPointer<UInt8>) {
        // Both lines start on the stack: they are handed over (copied into the writers' buffers) before this returns.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 576) { stack in
            record(
                content, requestID: requestID, stamp: stamp,
                lineSpace: UnsafeMutableBufferPointer(rebasing: stack[..<320]),
                textSpace: UnsafeMutableBufferPointer(rebasing: stack[320...]))
        }
    }

    private func record(
        _ content: Content, requestID: String, stamp: UnsafeBufferPointer<UInt8>,
        lineSpace: UnsafeMutableBufferPointer<UInt8>, textSpace: UnsafeMutableBufferPointer<UInt8>
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
        // and no `LogValue` per field on every token read. The lines are passed `inout`, not captured by a local
        // function: captured, they were checked for exclusive access at run time (`swift_beginAccess` and
        // `swift_endAccess`, about 115 instructions a token read).
        func string(_ field: AuditEvent.Field, _ value: String, _ line: inout ByteWriter, _ textLine: inout ByteWriter) {
            if json { line.append(field.json) }
            if text { textLine.append(field.text) }
            Self.append(string: value, json: &line, writingJSON: json, text: &textLine, writingText: text)
        }
        switch content {
        case .opening(let openingJSON, let openingText, let caller, _):
            if json {
                line.append(openingJSON)
                line.append(caller.json)
            }
            if text {
                textLine.append(openingText)
                textLine.append(caller.text)
            }
        case .event(let event):
            string(.event, event.kind.rawValue, &line, &textLine)
            if let account = event.account { string(.account, account, &line, &textLine) }
            if let provider = event.provider { string(.provider, provider, &line, &textLine) }
            if let endUser = event.endUser { string(.endUser, endUser, &line, &textLine) }
            string(.caller, event.caller, &line, &textLine)
        case .proxyCall(let call):
            string(.event, AuditEvent.Kind.proxyCall.rawValue, &line, &textLine)
            string(.account, call.account, &line, &textLine)
            if let provider = call.provider { string(.provider, provider, &line, &textLine) }
            if let endUser = call.endUser { string(.endUser, endUser, &line, &textLine) }
            string(.caller, call.caller, &line, &textLine)
        }
        string(.requestID, requestID, &line, &textLine)
        switch content {
        case .opening(_, _, _, let scope):
            // Only a token read that succeeded is recorded from kept opening fields (``recordTokenRead``): `ok`, plain,
            // then the scope as ``record(_:_:id:caller:request:outcome:scope:)`` puts it in the event's details.
            if json { line.append(#","outcome":"ok""#) }
            if text { textLine.append(" outcome=ok") }
            if let scope { string(.scope, scope, &line, &textLine) }
        case .event(let event):
            string(.outcome, event.outcome, &line, &textLine)
            for (field, value) in event.details {
                if json { line.append(field.json) }
                if text { textLine.append(field.text) }
                Self.append(value, json: &line, writingJSON: json, text: &textLine, writingText: text)
            }
        case .proxyCall(let call):
            // The details ProxyHandler gave its event, in the same order.
            func value(_ field: AuditEvent.Field, _ value: LogValue, _ line: inout ByteWriter, _ textLine: inout ByteWriter) {
                if json { line.append(field.json) }
                if text { textLine.append(field.text) }
                Self.append(value, json: &line, writingJSON: json, text: &textLine, writingText: text)
            }
            string(.outcome, call.outcome, &line, &textLine)
            string(.method, call.method, &line, &textLine)
            if let host = call.host { string(.host, host, &line, &textLine) }
            string(.path, call.path, &line, &textLine)
            if let status = call.status { value(.status, .int(status), &line, &textLine) }
            value(.bytesSent, .int(call.bytesSent), &line, &textLine)
            value(.bytesReceived, .int(call.bytesReceived), &line, &textLine)
            value(.durationMS, .double(call.durationMS, decimals: 1), &line, &textLine)
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
    fileprivate static func append(
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

/// The audit lines' time stamps (``RFC3339Date/write(_:to:alwaysMillis:)`` with milliseconds), the date and time to the
/// second copied from the last stamp's when it fell in the same second: a stamp is then its milliseconds, not a
/// conversion to the calendar per event (on every token read).
///
/// The last second is read without a lock (a sequence lock): the workers that stamp every token read only read the
/// cache line it sits on, so it stays in each core's cache instead of moving from one core to the other on every
/// event, as a lock's line (written by each taker) does. Writers, once a second, take turns under a lock.
final class SecondStamps: Sendable {
    /// Odd while a writer changes the fields below; counts up by two per change.
    private let sequence = Atomic<UInt64>(0)
    /// The last second stamped, since 1970 (`Int.min` before the first), and its stamp without milliseconds's first
    /// 20 bytes (`YYYY-MM-DDTHH:MM:SSZ`; the `Z` is written over), as three words.
    private let second = Atomic<Int>(Int.min)
    private let prefix0 = Atomic<UInt64>(0)
    private let prefix1 = Atomic<UInt64>(0)
    private let prefix2 = Atomic<UInt64>(0)
    /// Orders writers.
    private let writer = Mutex(())

    /// Writes `date` at `p`, which has room for ``RFC3339Date/maximumCount``, as `RFC3339Date.write(date, to: p,
    /// alwaysMillis: true)` does (the same bytes); returns how many it wrote.
    func write(_ date: Date, to p: UnsafeMutablePointer<UInt8>) -> Int {
        let interval = date.timeIntervalSince1970
        // Outside these (before 1970, after 9999, not a number) the general writer clamps and rounds as it does.
        guard interval >= 0, interval <= 253_402_300_799 else { return RFC3339Date.write(date, to: p, alwaysMillis: true) }
        // The second and the milliseconds as RFC3339Date.write rounds them.
        var second = Int(interval.rounded(.down))
        var millis = Int(((interval - Double(second)) * 1000).rounded())
        if millis == 1000 {
            second += 1
            millis = 0
        }
        let raw = UnsafeMutableRawPointer(p)
        if !copyPrefix(of: second, to: raw) {
            // The whole second, written without milliseconds (20 bytes): the date and time, then `Z`.
            _ = RFC3339Date.write(Date(timeIntervalSince1970: Double(second)), to: p)
            keepPrefix(of: second, from: raw)
        }
        p[19] = 0x2E
        p[20] = UInt8(truncatingIfNeeded: 48 + millis / 100)
        p[21] = UInt8(truncatingIfNeeded: 48 + millis / 10 % 10)
        p[22] = UInt8(truncatingIfNeeded: 48 + millis % 10)
        p[23] = 0x5A
        return 24
    }

    /// Copies the kept stamp's first 20 bytes to `raw` when it is `second`'s and no writer changed it meanwhile.
    private func copyPrefix(of second: Int, to raw: UnsafeMutableRawPointer) -> Bool {
        let before = sequence.load(ordering: .acquiring)
        guard before & 1 == 0, self.second.load(ordering: .relaxed) == second else { return false }
        let words = (prefix0.load(ordering: .relaxed), prefix1.load(ordering: .relaxed), prefix2.load(ordering: .relaxed))
        // The fields were read before the sequence is read again (a sequence lock's reader).
        atomicMemoryFence(ordering: .acquiring)
        guard sequence.load(ordering: .relaxed) == before else { return false }
        raw.storeBytes(of: words.0, as: UInt64.self)
        raw.storeBytes(of: words.1, toByteOffset: 8, as: UInt64.self)
        raw.storeBytes(of: UInt32(truncatingIfNeeded: words.2), toByteOffset: 16, as: UInt32.self)
        return true
    }

    /// Keeps the 20 bytes at `raw` as `second`'s stamp.
    private func keepPrefix(of second: Int, from raw: UnsafeMutableRawPointer) {
        let words = (
            raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
            UInt64(raw.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
        )
        writer.withLock { _ in
            sequence.add(1, ordering: .relaxed)
            // Readers that see the fields change see the odd sequence first (a sequence lock's writer).
            atomicMemoryFence(ordering: .releasing)
            self.second.store(second, ordering: .relaxed)
            prefix0.store(words.0, ordering: .relaxed)
            prefix1.store(words.1, ordering: .relaxed)
            prefix2.store(words.2, ordering: .relaxed)
            sequence.add(1, ordering: .releasing)
        }
    }
}
