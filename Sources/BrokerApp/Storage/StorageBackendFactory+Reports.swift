import BrokerCore
import BrokerFileStore

extension StorageBackendFactory {
    /// Logs what opening the file store found (a migration of the former layout, a torn journal line cut off) and
    /// routes the failures of background compactions to the log.
    static func reportOpening(_ store: JSONFileAccountRepository, logger: BrokerLogger) {
        if let migrated = store.migratedAtOpen {
            logger.log(
                .info,
                "account store migrated from one file per account to a snapshot and journal; "
                    + "the former accounts/ directory is kept as accounts.migrated/ and may be removed",
                [("accounts", .int(migrated)), ("directory", .string(store.dataDirectory))])
        }
        if store.tornLineCutAtOpen {
            logger.log(.warning, "account journal ended in a torn line (a write cut short by a crash, never acknowledged); it was cut off")
        }
        if store.sealedAtOpen > 0 {
            logger.log(
                .info, "plaintext account records of an earlier version sealed; the store is marked sealed",
                [("accounts", .int(store.sealedAtOpen))])
        }
        store.onDamagedRecord { id, error in
            logger.log(
                .error, "account record damaged: its secrets do not open; its reads answer 500 record_damaged until it is restored",
                [("account", .string(id)), ("error", .string(error.description))])
        }
        store.onCompactionFailure { error in
            logger.log(
                .error, "account journal compaction failed; it is retried as the journal grows", [("error", .string(error.description))])
        }
    }

    /// Logs the flows a damaged or unreadable flow journal cancelled at open.
    static func reportOpening(_ flows: JournalFlowStore, logger: BrokerLogger) {
        if flows.discardedAtOpen > 0 {
            logger.log(
                .warning, "pending flows cancelled at start: the flow journal was damaged or unreadable",
                [("count", .int(flows.discardedAtOpen))])
        }
    }

    /// Logs what replaying the webhook outbox found: damaged lines skipped, staged events decided.
    static func reportOpening(_ outbox: JournalWebhookOutbox, logger: BrokerLogger) {
        if outbox.damagedLinesAtOpen > 0 {
            logger.log(
                .warning, "webhook outbox: damaged lines skipped at start; their deliveries may be sent again",
                [("count", .int(outbox.damagedLinesAtOpen))])
        }
        let staged = outbox.stagedAtOpen
        if staged.committed + staged.dropped > 0 {
            // Events staged when the process stopped: those whose account change reached the disk are delivered.
            logger.log(
                .info, "webhook outbox: staged events decided at start from their accounts",
                [("committed", .int(staged.committed)), ("dropped", .int(staged.dropped))])
        }
    }
}
