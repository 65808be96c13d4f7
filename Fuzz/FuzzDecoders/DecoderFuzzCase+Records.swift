#if FUZZING
import BrokerCrypto
import Foundation
import FuzzSupport
@testable import BrokerCore

/// The providers file, account records, pending flows and the key setting: bytes read at start-up or from disk.
extension DecoderFuzzCase {
    /// The registry from the providers file: a configuration or a named error, and no environment secret in either.
    func checkProvidersFile() {
        do {
            let registry = try ProviderRegistry.load(environment: DecoderFixtures.environment, providersFile: input.payload)
            for provider in registry.all {
                require(ProvidersFile.isValidName(provider.name), "a provider name the file rules forbid")
                require(registry.provider(named: provider.name)?.name == provider.name, "a listed provider cannot be found")
                var dumped = ""
                dump(provider, to: &dumped)
                requireNoSecret(String(describing: provider) + dumped, among: DecoderFixtures.environmentSecrets, "a provider's printout")
            }
        } catch {
            requireNoSecret(error.description, among: DecoderFixtures.environmentSecrets, "a providers-file error")
        }
    }

    /// An account record: decoded, it re-encodes to a fixed point, and its printout does not depend on its tokens.
    func checkAccount(codec: some AccountRecordCodec) {
        guard let account = try? codec.decode(input.payload, path: "fuzz.json") else { return }
        requireStableEncoding(account, codec: codec)
        var blank = account
        blank.accessToken = Secret("")
        blank.refreshToken = account.refreshToken.map { _ in Secret("") }
        blank.tokenSecret = account.tokenSecret.map { _ in Secret("") }
        require(account.description == blank.description, "an account's printout depends on its tokens")
        var dumped = "", blankDumped = ""
        dump(account, to: &dumped)
        dump(blank, to: &blankDumped)
        require(dumped == blankDumped, "an account's dump depends on its tokens")
    }

    /// An encrypted record, with the checks of a plain one and of `needsRekey`.
    func checkEncryptedAccount() {
        let codec = DecoderFixtures.encryptedCodec
        _ = try? codec.needsRekey(input.payload, path: "fuzz.json")
        checkAccount(codec: codec)
        if let account = try? codec.decode(input.payload, path: "fuzz.json"), let sealed = try? codec.encode(account) {
            require((try? codec.needsRekey(sealed, path: "fuzz.json")) == false, "a freshly sealed record needs a rekey")
        }
    }

    /// encode(decode(encode(a))) equals encode(a), and decoding that gives the same account.
    private func requireStableEncoding(_ account: Account, codec: some AccountRecordCodec) {
        guard let first = try? codec.encode(account) else { fatalError("fuzz invariant broken: a decoded account does not encode") }
        guard let again = try? codec.decode(first, path: "fuzz.json") else {
            fatalError("fuzz invariant broken: an encoded account does not decode")
        }
        require((try? codec.encode(again)) == first, "re-encoding a decoded account is not stable")
        require(
            again.id == account.id && again.accessToken == account.accessToken && again.status == account.status,
            "a round trip changed the account")
    }

    /// A pending flow: decoded, it re-encodes to a fixed point, and its printout does not depend on its secrets.
    func checkPendingFlow() {
        guard let flow = try? PendingFlowCodec.decode(input.payload, path: "flow.json") else { return }
        guard let first = try? PendingFlowCodec.encode(flow),
            let again = try? PendingFlowCodec.decode(first, path: "flow.json")
        else { fatalError("fuzz invariant broken: a decoded flow does not round-trip") }
        require((try? PendingFlowCodec.encode(again)) == first, "re-encoding a decoded flow is not stable")
        require(again.state == flow.state && again.binding == flow.binding, "a round trip changed the flow")
        var blank = flow
        blank.state = ""
        blank.binding = ""
        blank.codeVerifier = flow.codeVerifier.map { _ in Secret("") }
        blank.requestToken = flow.requestToken.map { _ in "" }
        blank.requestTokenSecret = flow.requestTokenSecret.map { _ in Secret("") }
        require(flow.description == blank.description, "a flow's printout depends on its secrets")
        var dumped = "", blankDumped = ""
        dump(flow, to: &dumped)
        dump(blank, to: &blankDumped)
        require(dumped == blankDumped, "a flow's dump depends on its secrets")
    }

    /// `BROKER_ENCRYPTION_KEY`: neither the keyring's printout nor an error quotes key text.
    func checkKeyring() {
        let setting = payloadText
        // Key text is what follows an entry's first ':' (or the whole entry); ids may be named, keys never.
        let keyTexts = setting.split(separator: ",").map { entry in
            String(entry.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces)
        }.filter { text in
            // Only real key material: 32 bytes of base64 or base64url (other text may match fixed message words).
            Base64.decode(text)?.count == 32 || Base64URL.decode(text)?.count == 32
        }
        let printed: String
        do {
            printed = try EncryptionKeyring.parse(setting).description
        } catch {
            printed = error.description
        }
        for key in keyTexts { require(!printed.contains(key), "key text in a keyring printout or error") }
    }
}
#endif
