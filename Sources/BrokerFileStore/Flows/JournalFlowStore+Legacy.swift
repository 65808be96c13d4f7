import BrokerCore

extension JournalFlowStore {
    /// Reads the per-flow files an earlier flow store left in `directory` (`<state>.json`) into `entries`.
    ///
    /// Returns every name to remove once the journal holds the imported flows
    /// (flow files and their claimed copies, which were already used once) and
    /// how many flow files could not be read. A flow already in the journal wins.
    static func importLegacyFiles(
        in directory: String, into entries: inout [String: FlowJournal.Entry],
        sealer: EncryptedAccountCodec?
    ) throws(StoreError) -> (names: [String], unreadable: Int) {
        var names: [String] = []
        var unreadable = 0
        for name in try DirectoryListing.names(in: directory) {
            if DurableFile.hasRandomSuffix(name, marker: StoreFileName.takenFlowMarker) {
                names.append(name)
                continue
            }
            let state = String(name.dropLast(StoreFileName.recordExtension.count))
            guard StoreFileName.forFlow(state: state) == name else { continue }
            names.append(name)
            let path = directory + "/" + name
            guard let bytes = try DurableFile.read(path),
                let flow = try? PendingFlowCodec.decode(bytes, path: path, sealer: sealer), flow.state == state
            else {
                unreadable += 1
                continue
            }
            if entries[state] == nil {
                entries[state] = FlowJournal.Entry(
                    flow: flow, line: FlowJournalRecord.encodePut(PendingFlowCodec.record(for: flow, sealer: sealer)))
            }
        }
        return (names, unreadable)
    }
}
