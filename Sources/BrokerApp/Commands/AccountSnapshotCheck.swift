import BrokerCore
import BrokerHTTP
import Foundation

/// Checks that bytes are an account snapshot the file store will start from, before `token-broker restore` installs them.
///
/// The format: a header line `{"snapshot":"token-broker accounts","version":1,"journal":G,"accounts":N}`, then exactly
/// N lines of one compact account record each, every line ending in a newline. Each record must be a JSON object whose
/// `id` is its `provider` and `uid` joined by `:`, the ids ascend in byte order (the store writes them so and finds
/// them by binary search), none repeating, and the record must decode as the store decodes
/// it: in full when it is plaintext or a keyring is given (which then must open every sealed secret), else as far as
/// possible without the key. Records are all sealed or all plaintext (a backup of a store from before encryption at
/// rest): a plaintext record among sealed ones was not written by the broker, and is refused. Every refusal names the line.
struct AccountSnapshotCheck {
    /// What the file holds.
    struct Summary: Equatable {
        /// The number of accounts.
        var accounts: Int
        /// The ids of the keys the secrets are sealed with, sorted; empty when every record is plaintext.
        var keyIDs: [String]
        /// Whether every sealed secret was opened with the given keyring.
        var opened: Bool
    }

    /// Why the file was refused: a sentence naming the file and, where one is at fault, the line.
    struct Refusal: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// The snapshot format's name in the header's `snapshot` member.
    static let formatName = "token-broker accounts"
    /// The header `version` this broker reads.
    static let version = 1

    /// Checks `bytes`, read from `file` (named in refusals); `keyring`, when given, must open every sealed secret.
    static func check(_ bytes: [UInt8], file: String, keyring: EncryptionKeyring?) throws(Refusal) -> Summary {
        func refuse(_ line: Int?, _ reason: String) -> Refusal {
            Refusal(description: file + (line.map { " line \($0)" } ?? "") + ": " + reason)
        }
        guard !bytes.isEmpty else { throw refuse(nil, "the file is empty; a backup starts with its header line") }
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            guard let end = bytes[start...].firstIndex(of: 0x0A) else {
                throw refuse(lines.count + 1, "does not end with a newline: the file is truncated")
            }
            lines.append(bytes[start..<end])
            start = end + 1
        }
        let expected = try header(lines[0], refuse: refuse)
        guard lines.count - 1 == expected else {
            if lines.count - 1 < expected {
                throw refuse(nil, "the header says \(expected) accounts, the file holds \(lines.count - 1) record lines: it is truncated")
            }
            throw refuse(expected + 2, "is one record line more than the \(expected) accounts the header says")
        }
        let encrypted = keyring.map { EncryptedAccountCodec(keyring: $0) }
        var previous: (id: String, line: Int)?
        var keyIDs = Set<String>()
        var firstPlaintext: Int?
        for (offset, line) in lines.enumerated().dropFirst() {
            let number = offset + 1
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
                throw refuse(number, "is not a JSON object (an account record)")
            }
            guard let id = object["id"] as? String, let provider = object["provider"] as? String, let uid = object["uid"] as? String
            else { throw refuse(number, "is not an account record: it needs the strings \"id\", \"provider\" and \"uid\"") }
            guard ExactKey.same(id, AccountID(provider: provider, uid: uid).string) else {
                throw refuse(number, "the record's id \(JSONString.quote(id)) is not its provider and uid joined by \":\"")
            }
            // Ids are compared byte for byte, as the store does.
            if let previous {
                if ExactKey.same(previous.id, id) {
                    throw refuse(number, "account \(JSONString.quote(id)) is on line \(previous.line) too")
                }
                guard ExactKey.precedes(previous.id, id) else {
                    throw refuse(
                        number,
                        "account \(JSONString.quote(id)) comes after \(JSONString.quote(previous.id)) on line \(previous.line): "
                            + "a backup holds its records in id order, so this one was damaged or not written by the broker")
                }
            }
            previous = (id, number)
            let sealed = object["encryption"] != nil
            if sealed { keyIDs.formUnion(Self.keyIDs(object)) } else if firstPlaintext == nil { firstPlaintext = number }
            let path = file + " line \(number)"
            do throws(StoreError) {
                if let encrypted {
                    _ = try encrypted.decode(Array(line), path: path)
                } else if !sealed {
                    _ = try PlainJSONAccountCodec().decode(Array(line), path: path)
                }
            } catch {
                throw Refusal(description: error.message)
            }
        }
        if let firstPlaintext, !keyIDs.isEmpty {
            throw refuse(
                firstPlaintext,
                "is a plaintext record among sealed ones: a broker that seals writes none, so this record was put there by "
                    + "something else; restore an untouched backup")
        }
        return Summary(accounts: expected, keyIDs: keyIDs.sorted(), opened: keyring != nil && !keyIDs.isEmpty)
    }

    /// The header's account count; refuses a line that is not a header of a version this broker reads.
    private static func header(_ line: ArraySlice<UInt8>, refuse: (Int?, String) -> Refusal) throws(Refusal) -> Int {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any],
            object["snapshot"] as? String == formatName
        else {
            throw refuse(
                1,
                "is not a snapshot header ({\"snapshot\":\"\(formatName)\",\"version\":1,…}); "
                    + "restore takes a file that POST /backup (token-broker backup) wrote")
        }
        guard let version = object["version"] as? Int, version == Self.version else {
            throw refuse(1, "the snapshot's version is \(object["version"].map { "\($0)" } ?? "missing"); this broker reads version 1")
        }
        guard let journal = object["journal"] as? Int, journal >= 1 else {
            throw refuse(1, "the header's \"journal\" is not a generation of 1 or more")
        }
        guard let count = object["accounts"] as? Int, count >= 0 else {
            throw refuse(1, "the header's \"accounts\" is not a count of 0 or more")
        }
        return count
    }

    /// The key ids (`kid`) of the sealed secrets of a record.
    private static func keyIDs(_ record: [String: Any]) -> [String] {
        record.values.compactMap { ($0 as? [String: Any])?["kid"] as? String }
    }
}
