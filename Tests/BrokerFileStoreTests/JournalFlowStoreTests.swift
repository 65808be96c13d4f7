import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Glibc
import Testing

/// The journal flow store on a real file system: the shared suite, restart replay, torn and damaged
/// records, compaction, concurrency, storage failures and the import of per-file flows.
struct JournalFlowStoreTests {
    // MARK: Shared suite, with and without fsync

    private func conformance(durable: Bool, _ check: (FlowStoreOpener) async throws -> Void) async throws {
        try await TemporaryDirectory.with { directory in
            try await check { try JournalFlowStore(directory: directory + "/data", durable: durable) }
        }
    }

    @Test(arguments: [true, false]) func takenExactlyOnce(durable: Bool) async throws {
        try await conformance(durable: durable, FlowStoreConformance.takenExactlyOnce)
    }
    @Test func lookAlikeStateTakesNothing() async throws {
        try await conformance(durable: false, FlowStoreConformance.lookAlikeStateTakesNothing)
    }
    @Test(arguments: [true, false]) func concurrentTakesHaveOneWinner(durable: Bool) async throws {
        try await conformance(durable: durable, FlowStoreConformance.concurrentTakesHaveOneWinner)
    }
    @Test(arguments: [true, false]) func expiredFlowIsNotReturnedAndIsRemoved(durable: Bool) async throws {
        try await conformance(durable: durable, FlowStoreConformance.expiredFlowIsNotReturnedAndIsRemoved)
    }
    @Test(arguments: [true, false]) func pendingFlowSurvivesRestart(durable: Bool) async throws {
        try await conformance(durable: durable, FlowStoreConformance.pendingFlowSurvivesRestart)
    }
    @Test(arguments: [true, false]) func purgeRemovesOnlyExpiredFlows(durable: Bool) async throws {
        try await conformance(durable: durable, FlowStoreConformance.purgeRemovesOnlyExpiredFlows)
    }
    @Test(arguments: [true, false]) func deviceFlowsAreListedReplacedAndKept(durable: Bool) async throws {
        try await conformance(durable: durable, FlowStoreConformance.deviceFlowsAreListedReplacedAndKept)
    }
    @Test func malformedStateIsRefused() async throws {
        try await conformance(durable: false, FlowStoreConformance.malformedStateIsRefused)
    }

    // MARK: The journal file

    /// The journal's complete lines, each parsed as a JSON object (nil for a line that is not one).
    static func lines(_ store: JournalFlowStore) -> [[String: Any]?] {
        let text = String(decoding: FileProbe.bytes(store.journalPath) ?? [], as: UTF8.self)
        return text.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func append(_ text: String, to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    @Test func pastTheCapTheOldestFlowsAreDroppedAndStayGoneAfterARestart() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false, maxPending: 32)
            // Started one second apart: the first ones expire first.
            let states = (0..<40).map { _ in PendingFlow.randomState() }
            for (i, state) in states.enumerated() {
                try await store.put(PendingFlow.make(state: state, lifetime: 600 + Double(i)))
            }
            #expect(store.pendingCount <= 32)
            #expect(store.droppedAtCap == 40 - store.pendingCount)
            let kept = Set(states.suffix(store.pendingCount))
            let reopened = try JournalFlowStore(directory: directory, durable: false, maxPending: 32)
            #expect(reopened.pendingCount == store.pendingCount)
            for state in states {
                let flow = try await reopened.take(state: state, now: .fixture)
                #expect((flow != nil) == kept.contains(state), "\(state) kept: \(kept.contains(state))")
            }
        }
    }

    @Test func flowsLiveInOneJournalFile0600InA0700Directory() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false)
            for _ in 0..<3 { try await store.put(PendingFlow.make(state: PendingFlow.randomState())) }
            #expect(FileProbe.names(store.flowsDirectory) == [JournalFlowStore.journalName])
            #expect(FileProbe.mode(store.journalPath) == 0o600)
            #expect(FileProbe.mode(store.flowsDirectory) == 0o700)
            let lines = Self.lines(store)
            #expect(lines.count == 3)
            #expect(lines.allSatisfy { ($0?["put"] as? [String: Any])?["state"] is String })
        }
    }

    @Test func aJournalLineOfThePreviousVersionReadsWithoutAnEndUserAndANewOneKeepsIt() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false)
            var owned = PendingFlow.make(state: PendingFlow.randomState())
            owned.endUser = EndUser(id: "user-42", email: "ada@example.com", name: "Ada")
            owned.tags = ["plan": "pro"]
            try await store.put(owned)
            // A line exactly as the previous version wrote it: no end-user members.
            let state = PendingFlow.randomState()
            let previous =
                #"{"put":{"binding":"api","code_verifier":"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk","created_at":"2026-12-01T08:00:00Z","#
                + #""expires_at":"2099-12-01T08:10:00Z","provider":"google","state":"\#(state)","version":1}}"# + "\n"
            let handle = try #require(FileHandle(forWritingAtPath: store.journalPath))
            handle.seekToEndOfFile()
            handle.write(Data(previous.utf8))
            try handle.close()

            let reopened = try JournalFlowStore(directory: directory, durable: false)
            let taken = try #require(try await reopened.take(state: state, now: .fixture))
            #expect(taken.provider == "google" && taken.endUser == nil && taken.tags.isEmpty)
            #expect(try await reopened.take(state: owned.state, now: .fixture) == owned)
        }
    }

    @Test func aStoreOpenedAfterAnAbruptStopReplaysPutsAndTakes() async throws {
        try await TemporaryDirectory.with { directory in
            // The first store is never closed or flushed: like a process killed with SIGKILL.
            let first = try JournalFlowStore(directory: directory, durable: false)
            let flows = (0..<4).map { _ in PendingFlow.make(state: PendingFlow.randomState()) }
            for flow in flows { try await first.put(flow) }
            #expect(try await first.take(state: flows[1].state, now: .fixture) == flows[1])
            #expect(try await first.take(state: flows[2].state, now: .fixture) == flows[2])

            let second = try JournalFlowStore(directory: directory, durable: false)
            #expect(second.pendingCount == 2)
            #expect(second.discardedAtOpen == 0)
            #expect(try await second.take(state: flows[1].state, now: .fixture) == nil)
            #expect(try await second.take(state: flows[2].state, now: .fixture) == nil)
            #expect(try await second.take(state: flows[0].state, now: .fixture) == flows[0])
            #expect(try await second.take(state: flows[3].state, now: .fixture) == flows[3])
        }
    }

    @Test func aTornLastRecordIsIgnoredAndCutAway() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false)
            let kept = PendingFlow.make(state: PendingFlow.randomState())
            let torn = PendingFlow.make(state: PendingFlow.randomState())
            try await store.put(kept)
            // Half of a put line, as a write cut short by a crash leaves it.
            try Self.append(
                "{\"put\":{\"binding\":\"cookie-hash\",\"provider\":\"github\",\"state\":\"\(torn.state)\",\"ver", to: store.journalPath)

            let reopened = try JournalFlowStore(directory: directory, durable: false)
            #expect(reopened.discardedAtOpen == 0)
            #expect(FileProbe.bytes(reopened.journalPath)?.last == 0x0A)
            #expect(Self.lines(reopened).allSatisfy { $0 != nil })
            #expect(try await reopened.take(state: torn.state, now: .fixture) == nil)
            #expect(try await reopened.take(state: kept.state, now: .fixture) == kept)
        }
    }

    @Test func aTornTakeLeavesTheFlowPending() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false)
            let flow = PendingFlow.make(state: PendingFlow.randomState())
            try await store.put(flow)
            // The take's write never completed, so the take was never answered: the flow was not used.
            try Self.append("{\"take\":\"\(flow.state)", to: store.journalPath)
            #expect(try await JournalFlowStore(directory: directory, durable: false).take(state: flow.state, now: .fixture) == flow)
        }
    }

    @Test func aDamagedRecordCancelsTheFlowsBeforeItAndKeepsThoseAfter() async throws {
        try await TemporaryDirectory.with { directory in
            let before = PendingFlow.make(state: PendingFlow.randomState())
            let after = PendingFlow.make(state: PendingFlow.randomState())
            // The put line of `after`, as another store writes it.
            let scratch = try JournalFlowStore(directory: directory + "/scratch", durable: false)
            try await scratch.put(after)
            let afterLine = String(decoding: try #require(FileProbe.bytes(scratch.journalPath)), as: UTF8.self)

            let store = try JournalFlowStore(directory: directory + "/data", durable: false)
            try await store.put(before)
            // Zeroed blocks where a record was: it may have been the take of `before`.
            try Self.append(String(repeating: "\0", count: 40) + "\n" + afterLine, to: store.journalPath)

            let reopened = try JournalFlowStore(directory: directory + "/data", durable: false)
            #expect(reopened.discardedAtOpen == 1)
            #expect(Self.lines(reopened).allSatisfy { $0 != nil })
            #expect(try await reopened.take(state: before.state, now: .fixture) == nil)
            #expect(try await reopened.take(state: after.state, now: .fixture) == after)
        }
    }

    // MARK: Compaction and concurrency

    @Test func theJournalIsRewrittenWithOnlyPendingFlowsOnceMostlyDead() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false, compactionThreshold: 8192)
            let keepers = (0..<2).map { _ in PendingFlow.make(state: PendingFlow.randomState()) }
            for flow in keepers { try await store.put(flow) }
            var largest = 0
            for _ in 0..<200 {
                let flow = PendingFlow.make(state: PendingFlow.randomState())
                try await store.put(flow)
                #expect(try await store.take(state: flow.state, now: .fixture) == flow)
                largest = max(largest, FileProbe.bytes(store.journalPath)?.count ?? 0)
            }
            // 200 puts and takes are over 60 KB of records; the journal never grew far past the threshold.
            #expect(largest < 8192 + 1024)
            #expect(Self.lines(store).allSatisfy { $0 != nil })
            let reopened = try JournalFlowStore(directory: directory, durable: false)
            #expect(reopened.pendingCount == 2)
            for flow in keepers { #expect(try await reopened.take(state: flow.state, now: .fixture) == flow) }
        }
    }

    @Test(arguments: [true, false])
    func concurrentPutsAndTakesAcrossRewritesUseEachFlowOnce(durable: Bool) async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: durable, compactionThreshold: 2048)
            let flows = (0..<48).map { _ in PendingFlow.make(state: PendingFlow.randomState()) }
            let winners = try await withThrowingTaskGroup(of: [PendingFlow].self) { group in
                for flow in flows {
                    group.addTask {
                        try await store.put(flow)
                        return try await withThrowingTaskGroup(of: PendingFlow?.self) { takers in
                            for _ in 0..<6 { takers.addTask { try await store.take(state: flow.state, now: .fixture) } }
                            var taken: [PendingFlow] = []
                            for try await result in takers { if let result { taken.append(result) } }
                            return taken
                        }
                    }
                }
                var all: [PendingFlow] = []
                for try await taken in group { all += taken }
                return all
            }
            #expect(winners.count == flows.count)
            #expect(Set(winners.map(\.state)) == Set(flows.map(\.state)))
            #expect(try JournalFlowStore(directory: directory, durable: durable).pendingCount == 0)
        }
    }

    // MARK: Secrets, failures and upgrades

    @Test func verifierAndRequestTokenSecretAreSealedInTheJournal() async throws {
        try await TemporaryDirectory.with { directory in
            let sealer = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse("k1:" + Base64.encode(SecureRandom.bytes(32))))
            let store = try JournalFlowStore(directory: directory, durable: false, sealer: sealer)
            var flow = PendingFlow.make(state: PendingFlow.randomState())
            flow.requestToken = "request-token"
            flow.requestTokenSecret = Secret("REQUEST-SECRET-SENTINEL")
            try await store.put(flow)
            let text = String(decoding: FileProbe.bytes(store.journalPath) ?? [], as: UTF8.self)
            #expect(text.contains("sealed:v1:k1:"))
            #expect(!text.contains("SENTINEL"))
            #expect(
                try await JournalFlowStore(directory: directory, durable: false, sealer: sealer).take(state: flow.state, now: .fixture)
                    == flow)

            // Without the key the flow cannot be opened: it is dropped at start, never handed out garbled.
            try await store.put(flow)
            let keyless = try JournalFlowStore(directory: directory, durable: false)
            #expect(keyless.discardedAtOpen == 1)
            #expect(try await keyless.take(state: flow.state, now: .fixture) == nil)
        }
    }

    @Test func aTakeThatCannotBeRecordedFailsAndLeavesTheFlowPending() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false)
            let flow = PendingFlow.make(state: PendingFlow.randomState())
            try await store.put(flow)
            // The flows directory becomes a plain file: every open fails, as on a broken disk.
            let aside = store.flowsDirectory + ".aside"
            #expect(rename(store.flowsDirectory, aside) == 0)
            try FileProbe.plant("not a directory", at: store.flowsDirectory)
            await #expect(throws: StoreError.self) { _ = try await store.take(state: flow.state, now: .fixture) }
            await #expect(throws: StoreError.self) { try await store.put(PendingFlow.make(state: PendingFlow.randomState())) }

            #expect(unlink(store.flowsDirectory) == 0)
            #expect(rename(aside, store.flowsDirectory) == 0)
            #expect(try await store.take(state: flow.state, now: .fixture) == flow)
            #expect(try JournalFlowStore(directory: directory, durable: false).pendingCount == 0)
        }
    }

    @Test func aJournalRemovedByHandIsWrittenAgainFromMemory() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try JournalFlowStore(directory: directory, durable: false)
            let first = PendingFlow.make(state: PendingFlow.randomState())
            try await store.put(first)
            #expect(unlink(store.journalPath) == 0)
            let second = PendingFlow.make(state: PendingFlow.randomState())
            try await store.put(second)
            let reopened = try JournalFlowStore(directory: directory, durable: false)
            #expect(try await reopened.take(state: first.state, now: .fixture) == first)
            #expect(try await reopened.take(state: second.state, now: .fixture) == second)
        }
    }

    @Test func flowFilesOfThePerFileStoreAreImportedAndRemoved() async throws {
        try await TemporaryDirectory.with { directory in
            let old = try JSONFileFlowStore(directory: directory)
            let pending = PendingFlow.make(state: PendingFlow.randomState())
            try await old.put(pending)
            let used = PendingFlow.make(state: PendingFlow.randomState())
            try FileProbe.plant("{}", at: old.flowsDirectory + "/\(used.state).json.taken.fedcba9876543210")
            try FileProbe.plant("{\"version\": 1, \"sta", at: old.flowsDirectory + "/brokenFlowStateXXXXXX.json")

            let store = try JournalFlowStore(directory: directory, durable: true)
            #expect(store.discardedAtOpen == 1)
            #expect(FileProbe.names(store.flowsDirectory) == [JournalFlowStore.journalName])
            #expect(try await store.take(state: used.state, now: .fixture) == nil)
            #expect(try await store.take(state: pending.state, now: .fixture) == pending)
        }
    }
}
