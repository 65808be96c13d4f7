import BrokerCore
import BrokerCrypto
import BrokerHTTP
import Foundation

/// `token-broker accounts …`: asks a running broker through its HTTP API with the API key, and says what
/// it answered, in lines for people or, with `--json`, as the broker's own JSON.
///
/// Reads only `BROKER_URL` (where the broker is, default `http://127.0.0.1:8080`, a path prefix
/// allowed) and `BROKER_API_KEY`, so it runs on any machine that can reach the broker. Exit
/// status: 0 done; 1 the broker refused (its status, code and message are repeated) or could not
/// be reached (the URL is named); 2 a bad or missing setting. Tokens are printed only with `--json`.
public enum AccountsClient {
    /// Where the broker is when `BROKER_URL` is unset.
    public static let defaultURL = "http://127.0.0.1:8080"

    /// What to print and how to exit.
    public struct Outcome: Sendable, Equatable {
        /// 0 done, 1 refused or unreachable, 2 a bad setting.
        public var status: Int32
        /// The result, for stdout; empty on failure.
        public var output: String
        /// On failure, a short headline and the reason, for stderr.
        public var failure: (headline: String, reason: String)?

        public static func == (a: Outcome, b: Outcome) -> Bool {
            a.status == b.status && a.output == b.output && a.failure?.headline == b.failure?.headline
                && a.failure?.reason == b.failure?.reason
        }

        static func done(_ output: String) -> Outcome { Outcome(status: 0, output: output) }
        static func failed(_ status: Int32, _ headline: String, _ reason: String) -> Outcome {
            Outcome(status: status, output: "", failure: (headline, reason))
        }
    }

    /// The broker's base URL (no trailing `/`) and the API key, from `BROKER_URL` and `BROKER_API_KEY`, else the first
    /// key of `BROKER_API_KEYS`.
    static func settings(_ environment: [String: String]) throws(ConfigurationError) -> (baseURL: String, apiKey: Secret) {
        let read = EnvironmentReader(environment)
        let url = try read.publicURL("BROKER_URL", default: defaultURL)
        let named = try NamedAPIKey.parseList(read.raw("BROKER_API_KEYS"), variable: "BROKER_API_KEYS")
        guard let key = try read.secret("BROKER_API_KEY", minimumLength: 16) ?? named.first?.key else {
            throw ConfigurationError(
                variable: "BROKER_API_KEY", message: "is not set; the accounts and backup commands call the broker's API with it")
        }
        return (url, key)
    }

    /// Runs `command` against the broker the environment names; `upstream` is the HTTP client (the native one by default).
    public static func run(
        _ command: AccountsCommand, environment: [String: String],
        upstream: (any UpstreamClient)? = nil
    ) async -> Outcome {
        if case .importFile(let path) = command.action { return await importLines(path, environment: environment, upstream: upstream) }
        let (method, target) = request(for: command.action)
        let baseURL: String, response: UpstreamResponse
        switch await send(method, target, environment: environment, upstream: upstream, timeout: 30, userAgent: "accounts") {
        case .answered(let url, let answer): (baseURL, response) = (url, answer)
        case .failed(let outcome): return outcome
        }
        guard (200..<300).contains(response.status) else {
            return .failed(1, "request refused", refusal(response, method: method, target: target, baseURL: baseURL))
        }
        let body = String(decoding: response.body, as: UTF8.self)
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        if response.status != 204 && object == nil {
            return .failed(1, "unexpected answer", "\(method) \(target) at \(baseURL) answered \(response.status) without a JSON object")
        }
        let fields = object ?? [:]
        switch command.action {
        case .list:
            let accounts = fields["accounts"] as? [[String: Any]] ?? []
            return .done(command.json ? body : table(accounts))
        case .show:
            return .done(command.json ? body : details(fields))
        case .delete(let id):
            if command.json {
                return .done(response.status == 204 ? "{\"id\":\(JSONString.quote(id)),\"deleted\":true}" : body)
            }
            // The route answers 204 when the provider confirmed the revocation or has no revocation endpoint, and
            // 200 {"revoked":false,"revoke_error":…} when it was asked and did not confirm (docs/api.md).
            guard response.status != 204 else {
                return .done("Deleted \(id). Revocation at the provider: done (or the provider has no revocation endpoint).")
            }
            let reason = fields["revoke_error"] as? String ?? "no reason given"
            return .done(
                "Deleted \(id) here. Revocation at the provider: FAILED (\(reason)); its tokens may stay valid until they "
                    + "expire: revoke the grant in the provider's settings.")
        case .importFile:
            return .done(body)
        case .refresh(let id):
            let expiry = (fields["expires_at"] as? String).map { "the token now expires at \($0)" } ?? "the token has no expiry"
            return .done(command.json ? body : "Refreshed \(id); \(expiry).")
        }
    }

    /// `accounts import FILE`: each non-empty line of the JSON Lines file is one `POST /accounts` body (an entered
    /// credential or OAuth tokens to import), sent in order. Every line's outcome is one output line (`line 3: stored
    /// acme:42`, `line 7: 422 credential_invalid: …`), never a token; a failed line does not stop the rest. Exit status
    /// 1 when any line failed, with the count.
    static func importLines(_ path: String, environment: [String: String], upstream: (any UpstreamClient)?) async -> Outcome {
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failed(2, "cannot read the file", "\(path) cannot be read")
        }
        let text = String(decoding: data, as: UTF8.self)
        var lines: [String] = []
        var stored = 0, failed = 0
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let body = line.trimmingCharacters(in: .whitespaces)
            guard !body.isEmpty else { continue }
            let number = index + 1
            switch await send(
                "POST", "/accounts", environment: environment, upstream: upstream, timeout: 60, userAgent: "accounts-import",
                body: Array(body.utf8))
            {
            case .failed(let outcome) where outcome.status == 2:
                return outcome
            case .failed(let outcome):
                failed += 1
                lines.append("line \(number): \(outcome.failure?.reason ?? "failed")")
            case .answered(_, let response):
                let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
                if (200..<300).contains(response.status) {
                    stored += 1
                    lines.append("line \(number): stored \(object?["id"] as? String ?? "?")")
                } else {
                    failed += 1
                    let code = object?["error"] as? String ?? "error"
                    lines.append("line \(number): \(response.status) \(code): \(object?["message"] as? String ?? "")")
                }
            }
        }
        lines.append("\(stored) stored, \(failed) failed")
        let output = lines.joined(separator: "\n")
        guard failed == 0 else {
            return Outcome(
                status: 1, output: output, failure: ("import incomplete", "\(failed) of \(stored + failed) lines were not imported"))
        }
        return .done(output)
    }

    /// Whether `accounts delete` may go ahead: nil when it may (`--yes`, another sub-command, or "y"/"yes" answered on
    /// a terminal), else what to report. `ask` shows the question and reads the answer line (nil at end of input).
    ///
    /// A deletion revokes the grant at the provider and cannot be undone, so it is asked for; a script (stdin not a
    /// terminal) has nobody to ask and must say `--yes`: without it nothing is deleted and the exit status is 2.
    public static func confirmation(
        _ command: AccountsCommand, isTerminal: Bool, ask: (String) -> String?
    ) -> Outcome? {
        guard case .delete(let id) = command.action, !command.yes else { return nil }
        guard isTerminal else {
            return .failed(
                2, "confirmation needed",
                "accounts delete asks before deleting and stdin is not a terminal: pass --yes to delete \(id) without asking. "
                    + "Nothing was deleted")
        }
        let answer = ask("Delete \(id) and revoke its tokens at the provider? This cannot be undone. [y/N] ")
        let normalized = answer?.trimmingCharacters(in: .whitespaces).lowercased()
        guard normalized == "y" || normalized == "yes" else {
            return .failed(1, "not deleted", "\(id) was kept (answer y to delete it)")
        }
        return nil
    }

    /// How a request to the broker went: its answer (any status), or what to report instead.
    enum Exchange {
        /// The broker at `baseURL` answered.
        case answered(baseURL: String, UpstreamResponse)
        /// A bad setting (2) or an unreachable broker (1).
        case failed(Outcome)
    }

    /// Sends `method target` with the API key to the broker the environment names, waiting `timeout` seconds;
    /// `userAgent` names the command. A list of every account can be large: answers of up to 1 GiB are read.
    static func send(
        _ method: String, _ target: String, environment: [String: String], upstream: (any UpstreamClient)?,
        timeout: Double, userAgent: String, body: [UInt8] = []
    ) async -> Exchange {
        let baseURL: String, apiKey: Secret
        do {
            (baseURL, apiKey) = try settings(environment)
        } catch {
            return .failed(.failed(2, "invalid configuration", error.description))
        }
        let client = upstream ?? EpollUpstreamClient(timeout: timeout, maxResponseBytes: 1 << 30)
        do {
            let response = try await client.send(
                UpstreamRequest(
                    method: method, url: baseURL + target,
                    headers: [
                        ("Authorization", "Bearer " + apiKey.value), ("Accept", "application/json"),
                        ("User-Agent", "token-broker/\(BrokerVersion.current) \(userAgent)"),
                    ] + (body.isEmpty ? [] : [("Content-Type", "application/json")]), body: body))
            return .answered(baseURL: baseURL, response)
        } catch {
            let why =
                switch error {
                case .timeout: "no answer within \(Int(timeout)) s"
                case .connectTimeout: "no connection within \(Int(timeout)) s"
                case .transport(_, let message): message
                case .tooLarge(let limit): "the answer is larger than \(limit) bytes"
                }
            return .failed(
                .failed(
                    1, "broker unreachable", "cannot reach the broker at \(baseURL): \(why) (is it running there? BROKER_URL says where)"))
        }
    }

    /// The method and target of `action`, ids percent-encoded.
    static func request(for action: AccountsCommand.Action) -> (method: String, target: String) {
        switch action {
        case .list(let provider): ("GET", "/accounts" + (provider.map { "?provider=" + PercentEncoding.rfc3986($0) } ?? ""))
        case .show(let id): ("GET", "/account?id=" + PercentEncoding.rfc3986(id))
        case .delete(let id): ("DELETE", "/account?id=" + PercentEncoding.rfc3986(id))
        case .refresh(let id): ("POST", "/account/refresh?id=" + PercentEncoding.rfc3986(id))
        case .importFile: ("POST", "/accounts")
        }
    }

    /// The broker's refusal in one sentence: status, its `error` code and `message`, and when to try again.
    static func refusal(_ response: UpstreamResponse, method: String, target: String, baseURL: String) -> String {
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        var text = "\(method) \(target) at \(baseURL): \(response.status)"
        if let code = object?["error"] as? String, let message = object?["message"] as? String {
            text += " \(code): \(message)"
        }
        if let seconds = response.header("Retry-After") { text += " (try again in \(seconds) s)" }
        return text
    }

    /// Accounts as a table for people, one line each, and how many.
    static func table(_ accounts: [[String: Any]]) -> String {
        guard !accounts.isEmpty else { return "No accounts." }
        let rows =
            [["ID", "STATUS", "END USER", "TAGS", "EXPIRES AT", "REFRESHED AT"]]
            + accounts.map { account in
                [
                    text(account["id"]), text(account["status"]), text(account["end_user_id"]), tags(account["tags"]),
                    text(account["expires_at"], none: "never"), text(account["refreshed_at"]),
                ]
            }
        let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { row in
            row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        return (lines + ["\(accounts.count) account\(accounts.count == 1 ? "" : "s")"]).joined(separator: "\n")
    }

    /// One account for people, a field per line; its token and token secret only as their length.
    static func details(_ account: [String: Any]) -> String {
        var rows: [(String, String)] = []
        for name in [
            "id", "provider", "uid", "screen_name", "status", "token_type", "scope", "expires_at", "created_at",
            "updated_at", "refreshed_at", "end_user_id", "end_user_email", "end_user_name",
        ] where name != "screen_name" || account[name] != nil {
            rows.append((name, text(account[name], none: name == "expires_at" ? "never" : "-")))
        }
        rows.append(("tags", tags(account["tags"])))
        for name in ["access_token", "token_secret"] {
            if let secret = account[name] as? String { rows.append((name, "set (\(secret.count) characters; --json prints it)")) }
        }
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n")
    }

    /// An account's tags as `key=value` pairs sorted by key and joined by commas; `-` when there are none.
    private static func tags(_ value: Any?) -> String {
        guard let tags = value as? [String: Any], !tags.isEmpty else { return "-" }
        return tags.keys.sorted().map { "\($0)=\(text(tags[$0]))" }.joined(separator: ",")
    }

    /// A JSON value as text: strings as they are, null or absent as `none`.
    private static func text(_ value: Any?, none: String = "-") -> String {
        switch value {
        case let string as String: string
        case let number as NSNumber: number.stringValue
        default: none
        }
    }
}
