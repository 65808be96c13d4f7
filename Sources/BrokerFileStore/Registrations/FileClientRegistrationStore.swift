import BrokerCore
import Foundation
import Synchronization

/// The ``ClientRegistrationStore`` of the file store: `client-registrations.json` in the data directory, rewritten
/// whole (write, fsync, rename, as every file here) when a registration is added.
///
/// `{"version":1,"registrations":[<record>, …]}`, each record ``ClientRegistrationCodec``'s object. Registrations
/// are a handful (one per remote MCP server), added once each and read only by discovery, so every call reads the file
/// afresh and an add rewrites it whole. One process owns the directory, so a lock in this process, one per file
/// (shared by every store opened on it), makes the read-then-write a compare-and-set.
public final class FileClientRegistrationStore: ClientRegistrationStore {
    /// The file's path.
    public let path: String
    /// Seals client secrets at rest when set.
    let sealer: EncryptedAccountCodec?
    /// The lock of each file, by path, shared by every store opened on it in this process.
    private static let locks = Mutex<[String: FileLock]>([:])

    /// One file's lock.
    private final class FileLock: Sendable {
        let mutex = Mutex(())
    }

    /// This file's lock.
    private var lock: FileLock {
        Self.locks.withLock { locks in
            if let lock = locks[path] { return lock }
            let lock = FileLock()
            locks[path] = lock
            return lock
        }
    }

    /// The file's name in the data directory.
    public static let fileName = "client-registrations.json"

    /// A store in `directory`; nothing is read until first use.
    public init(directory: String, sealer: EncryptedAccountCodec? = nil) {
        path = directory + "/" + Self.fileName
        self.sealer = sealer
    }

    /// The registration under `key`.
    public func registration(for key: String) async throws(StoreError) -> ClientRegistration? {
        try await BlockingIO.run { [self] () throws(StoreError) -> ClientRegistration? in
            try lock.mutex.withLock { _ throws(StoreError) -> ClientRegistration? in try read()[ExactKey(key)] }
        }
    }

    /// Keeps `registration` unless its key has one, writing the file before answering; returns the kept one.
    public func add(_ registration: ClientRegistration) async throws(StoreError) -> ClientRegistration {
        try await BlockingIO.run { [self] () throws(StoreError) -> ClientRegistration in
            try lock.mutex.withLock { _ throws(StoreError) -> ClientRegistration in
                var table = try read()
                if let kept = table[ExactKey(registration.key)] { return kept }
                table[ExactKey(registration.key)] = registration
                try DurableFile.write(encode(table), to: path)
                return registration
            }
        }
    }

    /// The registrations in the file, by key; empty when there is no file.
    private func read() throws(StoreError) -> [ExactKey: ClientRegistration] {
        var table: [ExactKey: ClientRegistration] = [:]
        if let bytes = try DurableFile.read(path) {
            guard let root = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
                (root["version"] as? Int) == 1, let records = root["registrations"] as? [Any]
            else { throw .corrupt(path: path, reason: "not a client registrations file") }
            for record in records {
                guard JSONSerialization.isValidJSONObject(record), let data = try? JSONSerialization.data(withJSONObject: record),
                    let object = record as? [String: Any], let server = object["server"] as? String,
                    let issuer = object["issuer"] as? String, let redirect = object["redirect_uri"] as? String
                else { throw .corrupt(path: path, reason: "a client registration is not an object with its server") }
                let key = ClientRegistration.key(server: server, issuer: issuer, redirectURI: redirect)
                table[ExactKey(key)] = try ClientRegistrationCodec.decode([UInt8](data), key: key, path: path, sealer: sealer)
            }
        }
        return table
    }

    /// The file's bytes for `table`, records in key order.
    private func encode(_ table: [ExactKey: ClientRegistration]) -> [UInt8] {
        let records = table.keys.sorted { $0.string.utf8.lexicographicallyPrecedes($1.string.utf8) }.compactMap { key in
            table[key].map { String(decoding: ClientRegistrationCodec.encode($0, sealer: sealer), as: UTF8.self) }
        }
        return Array(("{\"registrations\":[" + records.joined(separator: ",") + "],\"version\":1}\n").utf8)
    }
}
