#if FUZZING
import BrokerCrypto
@testable import BrokerCore

/// The fixed environment, keys and sentinels the decoders run with.
enum DecoderFixtures {
    /// Secret values that only the environment holds; no message may repeat them.
    static let environmentSecrets = ["#env-secret-1#", "#env-secret-2#", "#env-secret-3#", "#env-secret-4#", "#env-secret-5#"]

    /// Preset credentials and a few variables a providers file can refer to as `${NAME}`.
    static let environment: [String: String] = [
        "GITHUB_CLIENT_ID": "gh-client", "GITHUB_CLIENT_SECRET": environmentSecrets[0],
        "TWITTER_CONSUMER_KEY": "tw-key", "TWITTER_CONSUMER_SECRET": environmentSecrets[1],
        "TMDB_API_KEY": environmentSecrets[2], "WEIBO_CLIENT_ID": "wb-client", "WEIBO_CLIENT_SECRET": environmentSecrets[3],
        "CUSTOM_CLIENT_ID": "custom-client", "CUSTOM_SECRET": environmentSecrets[4], "EMPTY": "",
    ]

    /// A token value the response seeds carry; no error message may repeat it.
    static let responseSecret = "#tok-secret#"

    /// The `BROKER_ENCRYPTION_KEY` setting of the encrypted-record codec: a current key and an older one.
    static let keySetting = "k1:" + Base64.encode(Array(1...32)) + ",k0:" + Base64.encode(Array(101...132))

    /// The encrypted-record codec, with a fixed nonce so that encoding is repeatable.
    static let encryptedCodec: EncryptedAccountCodec = {
        guard let keyring = try? EncryptionKeyring.parse(keySetting) else { fatalError("fixture key setting") }
        return EncryptedAccountCodec(keyring: keyring) { count in [UInt8](repeating: 0x5A, count: count) }
    }()
}
#endif
