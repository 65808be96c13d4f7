import Dispatch
import Synchronization

/// Reads and validates every account file of a directory, in parallel, for start-up.
enum AccountDirectoryLoader {
    /// Every account in `directory` by id.
    ///
    /// Only `*.json` files are records; other names are ignored. A record that
    /// does not decode, or whose id does not match its file name, is reported
    /// as ``StoreError/corrupt(path:reason:)``; with several bad files the one
    /// with the smallest path is reported, so the message is stable.
    static func load(_ directory: String, codec: some AccountRecordCodec) throws(StoreError) -> [String: Account] {
        let names = try DirectoryListing.names(in: directory).filter { $0.hasSuffix(StoreFileName.recordExtension) }
        let chunkCount = max(1, min(names.count / 256, 64))
        let merged = Mutex<(accounts: [String: Account], errors: [StoreError])>(([:], []))
        merged.withLock { $0.accounts.reserveCapacity(names.count) }
        DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
            var accounts: [(String, Account)] = []
            var errors: [StoreError] = []
            for position in stride(from: chunk, to: names.count, by: chunkCount) {
                do throws(StoreError) {
                    let account = try loadOne(names[position], in: directory, codec: codec)
                    accounts.append((account.id, account))
                } catch {
                    errors.append(error)
                }
            }
            merged.withLock { state in
                for (id, account) in accounts { state.accounts[id] = account }
                state.errors += errors
            }
        }
        return try merged.withLock { state throws(StoreError) -> [String: Account] in
            if let first = state.errors.min(by: { sortKey($0) < sortKey($1) }) { throw first }
            return state.accounts
        }
    }

    private static func loadOne(_ name: String, in directory: String, codec: some AccountRecordCodec) throws(StoreError) -> Account {
        let path = directory + "/" + name
        guard let bytes = try DurableFile.read(path) else {
            throw .unavailable("load \(path): the file vanished while loading; is another process using this directory?")
        }
        let account: Account
        do {
            account = try codec.decode(bytes, path: path)
        } catch let error as StoreError {
            throw error
        } catch {
            throw .corrupt(path: path, reason: String(describing: error))
        }
        guard StoreFileName.forAccount(id: account.id) == name else {
            throw .corrupt(path: path, reason: "the file name does not match the account id \"\(account.id)\"")
        }
        return account
    }

    private static func sortKey(_ error: StoreError) -> String {
        switch error {
        case .corrupt(let path, _): return "0" + path
        case .unavailable(let message): return "1" + message
        }
    }
}
