import BrokerCore
import BrokerFileStore
import Foundation

/// `token-broker backup [--json]`: asks the running broker for a backup of every account (`POST /backup`) and says
/// where it went.
///
/// A client like `token-broker accounts`: it reads `BROKER_URL` and `BROKER_API_KEY` only, and the file is written by
/// the broker into its own data directory (`backups/…`), so the command may run on another machine. Exit status as
/// for ``AccountsClient``: 0 written; 1 refused (a broker on Redis answers `409 not_supported`) or unreachable;
/// 2 a bad setting.
public enum BackupClient {
    /// How long the broker may take to write the backup, in seconds.
    static let timeout: Double = 300

    /// Asks the broker the environment names for a backup; `upstream` is the HTTP client (the native one by default).
    public static func run(json: Bool, environment: [String: String], upstream: (any UpstreamClient)? = nil) async
        -> AccountsClient
        .Outcome
    {
        let baseURL: String, response: UpstreamResponse
        switch await AccountsClient.send(
            "POST", "/backup", environment: environment, upstream: upstream, timeout: timeout, userAgent: "backup")
        {
        case .answered(let url, let answer): (baseURL, response) = (url, answer)
        case .failed(let outcome): return outcome
        }
        guard response.status == 200 else {
            return .failed(
                1, "backup refused", AccountsClient.refusal(response, method: "POST", target: "/backup", baseURL: baseURL))
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard let file = object?["file"] as? String, let accounts = object?["accounts"] as? Int, let bytes = object?["bytes"] as? Int
        else {
            return .failed(1, "unexpected answer", "POST /backup at \(baseURL) answered 200 without file, accounts and bytes")
        }
        if json { return .done(String(decoding: response.body, as: UTF8.self)) }
        return .done(
            """
            Backup written: \(file) in the broker's data directory (\(accounts) account\(accounts == 1 ? "" : "s"), \(bytes) bytes).
            Its secrets are sealed: restoring it needs the same encryption key (BROKER_ENCRYPTION_KEY, or the data directory's \
            \(EncryptionKeyring.keyFileName) file), which is not in the backup.
            """)
    }
}
