/// Journals as the version before the shared journal component (``JournalLog``) wrote them, captured from that version
/// for ``JournalFormatCompatibilityTests``: the bytes must stay the same.
enum JournalFormatFixtures {
    /// The flow journal the fixed sequence of ``JournalFormatCompatibilityTests/writeFlowJournal(in:)`` wrote.
    static let flowJournal = joined([
        #"{"put":{"binding":"cookie-hash-state-","code_verifier":"verifier-SENTINEL-state-aaaaaaaaaaaaaaaa","created_at":"2026-11-30T08:00:00Z","expires_at":"2026-11-30T08:10:00Z","provider":"github","return_to":"https://app.example/done","state":"state-aaaaaaaaaaaaaaaa","version":1}}"#,
        #"{"outcome":{"expires_at":"2026-11-30T08:10:00Z","keep_until":"2026-11-30T08:20:00Z","provider":"github","state":"state-aaaaaaaaaaaaaaaa","status":"pending","version":1}}"#,
        #"{"put":{"binding":"cookie-hash-state-","code_verifier":"verifier-SENTINEL-state-bbbbbbbbbbbbbbbb","created_at":"2026-11-30T08:00:00Z","expires_at":"2026-11-30T08:10:00Z","provider":"github","return_to":"https://app.example/done","state":"state-bbbbbbbbbbbbbbbb","version":1}}"#,
        #"{"take":"state-aaaaaaaaaaaaaaaa"}"#,
        #"{"outcome":{"account":"github:42","ended_at":"2026-11-30T08:00:30Z","expires_at":"2026-11-30T08:10:00Z","keep_until":"2026-11-30T08:20:00Z","provider":"github","state":"state-aaaaaaaaaaaaaaaa","status":"completed","version":1}}"#,
        #"{"put":{"binding":"cookie-hash-state-","code_verifier":"verifier-SENTINEL-state-cccccccccccccccc","created_at":"2026-11-30T08:00:00Z","expires_at":"2026-11-30T08:00:01Z","provider":"github","return_to":"https://app.example/done","state":"state-cccccccccccccccc","version":1}}"#,
        #"{"take":"state-cccccccccccccccc"}"#,
        #"{"outcome":{"ended_at":"2026-11-30T08:00:30Z","error":"access_denied","expires_at":"2026-11-30T08:10:00Z","keep_until":"2026-11-30T08:20:00Z","provider":"github","state":"state-bbbbbbbbbbbbbbbb","status":"failed","version":1}}"#,
    ])

    /// That flow journal rewritten at the next start (its lines in no particular order).
    static let flowJournalRewritten = joined([
        #"{"put":{"binding":"cookie-hash-state-","code_verifier":"verifier-SENTINEL-state-bbbbbbbbbbbbbbbb","created_at":"2026-11-30T08:00:00Z","expires_at":"2026-11-30T08:10:00Z","provider":"github","return_to":"https://app.example/done","state":"state-bbbbbbbbbbbbbbbb","version":1}}"#,
        #"{"outcome":{"ended_at":"2026-11-30T08:00:30Z","error":"access_denied","expires_at":"2026-11-30T08:10:00Z","keep_until":"2026-11-30T08:20:00Z","provider":"github","state":"state-bbbbbbbbbbbbbbbb","status":"failed","version":1}}"#,
        #"{"outcome":{"account":"github:42","ended_at":"2026-11-30T08:00:30Z","expires_at":"2026-11-30T08:10:00Z","keep_until":"2026-11-30T08:20:00Z","provider":"github","state":"state-aaaaaaaaaaaaaaaa","status":"completed","version":1}}"#,
    ])

    /// The outbox journal the fixed sequence of ``JournalFormatCompatibilityTests/writeOutboxJournal(in:)`` wrote.
    static let outboxJournal = joined([
        #"{"put":{"account_id":"acme:1","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000001\",\"type\":\"account.connected\"}","enqueued_at":1796025601000,"event_id":"evt_00000000000000000000000000000001","id":"evt_00000000000000000000000000000001.0","next_attempt_at":1796025601000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"put":{"account_id":"acme:2","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000002\",\"type\":\"account.connected\"}","enqueued_at":1796025602000,"event_id":"evt_00000000000000000000000000000002","id":"evt_00000000000000000000000000000002.0","next_attempt_at":1796025602000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"done":"evt_00000000000000000000000000000001.0"}"#,
        #"{"put":{"account_id":"acme:2","attempts":1,"body":"{\"id\":\"evt_00000000000000000000000000000002\",\"type\":\"account.connected\"}","enqueued_at":1796025602000,"event_id":"evt_00000000000000000000000000000002","id":"evt_00000000000000000000000000000002.0","last_error":"HTTP 500","next_attempt_at":1796025640000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"stage":{"account":"acme:3","after":"abababababababababababababababababababababababababababababababab","before":"none"},"put":{"account_id":"acme:3","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000003\",\"type\":\"account.connected\"}","enqueued_at":1796025603000,"event_id":"evt_00000000000000000000000000000003","id":"evt_00000000000000000000000000000003.0","next_attempt_at":1796025603000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"commit":"evt_00000000000000000000000000000003.0"}"#,
        #"{"stage":{"account":"acme:4","after":"abababababababababababababababababababababababababababababababab","before":"none"},"put":{"account_id":"acme:4","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000004\",\"type\":\"account.connected\"}","enqueued_at":1796025604000,"event_id":"evt_00000000000000000000000000000004","id":"evt_00000000000000000000000000000004.0","next_attempt_at":1796025604000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"done":"evt_00000000000000000000000000000004.0"}"#,
        #"{"put":{"account_id":"acme:5","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000005\",\"type\":\"account.connected\"}","enqueued_at":1796025605000,"event_id":"evt_00000000000000000000000000000005","id":"evt_00000000000000000000000000000005.0","next_attempt_at":1796025605000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"put":{"account_id":"acme:5","attempts":9,"body":"{\"id\":\"evt_00000000000000000000000000000005\",\"type\":\"account.connected\"}","dropped_at":1796025620000,"enqueued_at":1796025605000,"event_id":"evt_00000000000000000000000000000005","id":"evt_00000000000000000000000000000005.0","last_error":"timeout","next_attempt_at":1796025605000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"put":{"account_id":"acme:6","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000006\",\"type\":\"account.connected\"}","enqueued_at":1796025606000,"event_id":"evt_00000000000000000000000000000006","id":"evt_00000000000000000000000000000006.0","next_attempt_at":1796025606000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"put":{"account_id":"acme:6","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000006\",\"type\":\"account.connected\"}","enqueued_at":1796025660000,"event_id":"evt_00000000000000000000000000000006","id":"evt_00000000000000000000000000000006.0","next_attempt_at":1796025660000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
    ])

    /// That outbox journal rewritten at the next start, a minute later.
    static let outboxJournalRewritten = joined([
        #"{"put":{"account_id":"acme:2","attempts":1,"body":"{\"id\":\"evt_00000000000000000000000000000002\",\"type\":\"account.connected\"}","enqueued_at":1796025602000,"event_id":"evt_00000000000000000000000000000002","id":"evt_00000000000000000000000000000002.0","last_error":"HTTP 500","next_attempt_at":1796025640000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"put":{"account_id":"acme:3","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000003\",\"type\":\"account.connected\"}","enqueued_at":1796025603000,"event_id":"evt_00000000000000000000000000000003","id":"evt_00000000000000000000000000000003.0","next_attempt_at":1796025603000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"put":{"account_id":"acme:5","attempts":9,"body":"{\"id\":\"evt_00000000000000000000000000000005\",\"type\":\"account.connected\"}","dropped_at":1796025620000,"enqueued_at":1796025605000,"event_id":"evt_00000000000000000000000000000005","id":"evt_00000000000000000000000000000005.0","last_error":"timeout","next_attempt_at":1796025605000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
        #"{"put":{"account_id":"acme:6","attempts":0,"body":"{\"id\":\"evt_00000000000000000000000000000006\",\"type\":\"account.connected\"}","enqueued_at":1796025660000,"event_id":"evt_00000000000000000000000000000006","id":"evt_00000000000000000000000000000006.0","next_attempt_at":1796025660000,"type":"account.connected","url":"http://127.0.0.1:9/hooks"}}"#,
    ])

    /// `lines`, each ended by a newline.
    private static func joined(_ lines: [String]) -> String {
        lines.map { $0 + "\n" }.joined()
    }
}
