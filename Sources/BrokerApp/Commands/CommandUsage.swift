/// The usage of each command on its own, for `token-broker COMMAND --help` and `token-broker help COMMAND`: what it
/// does, its arguments and options, the variables it reads and its exit statuses.
///
/// Topics are the command names of ``BrokerCommand/names``, plus `accounts list|show|delete|refresh` (whose options
/// differ), `config check` and `webhooks list|replay`.
extension BrokerCommand {
    /// The text for `topic`, or the whole usage when `topic` is nil or not a topic.
    public static func usage(of topic: String?) -> String {
        guard let topic, let text = topics[topic] else { return usage }
        return text
    }

    /// The topic `--help` names when it follows `arguments`: the command, and for `accounts` and `webhooks` the
    /// sub-command when one is given; nil for none.
    static func helpTopic(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        if let second = arguments.dropFirst().first, topics[first + " " + second] != nil { return first + " " + second }
        return first
    }

    private static let accountsCommon = """
          --json          print the broker's JSON answer as is (tokens included) instead of lines for people

        The broker is asked through its API at BROKER_URL (default http://127.0.0.1:8080, a path prefix allowed) with
        BROKER_API_KEY (else the first key of BROKER_API_KEYS). Exit status: 0 done; 1 the broker refused (its status,
        error code and message are repeated) or could not be reached (the URL is named); 2 a bad argument or setting.
        """

    /// The texts by topic: each command's, each `accounts` sub-command's, and the sub-commands of `config` and `webhooks`
    /// (which share their command's text).
    private static let topics: [String: String] = texts.merging(
        ["config check": texts["config"]!, "webhooks list": texts["webhooks"]!, "webhooks replay": texts["webhooks"]!]
    ) { first, _ in first }

    /// The texts written out.
    private static let texts: [String: String] = [
        "serve": """
        usage: token-broker [serve]
        Run the broker. Every setting comes from BROKER_* environment variables and the providers' own variables
        (GITHUB_CLIENT_ID, …); docs/configuration.md lists them. Stops on SIGTERM or SIGINT after draining.
        Exit status: 2 a bad setting (the variable is named), 1 any other start-up failure.
        """,
        "demo": """
        usage: token-broker demo
        Run the broker with a built-in demo provider (not a real account) and throwaway data, and print what to open.
        BROKER_DATA_DIR, BROKER_STORE, BROKER_PROVIDERS_FILE, BROKER_API_KEY and BROKER_PUBLIC_URL are ignored;
        BROKER_DEMO_PORT chooses the demo provider's port, BROKER_DEMO_TOKEN_LIFETIME its tokens' lifetime in seconds.
        """,
        "healthcheck": """
        usage: token-broker healthcheck
        Ask /healthz on the configured BROKER_HOST and BROKER_PORT. Exit status: 0 when it answers 200 within 3 s,
        else 1 with the reason on stderr. Meant for a container HEALTHCHECK (no curl needed).
        """,
        "rekey": """
        usage: token-broker rekey [--dry-run]
        Re-encrypt every stored account with the current key (the first of BROKER_ENCRYPTION_KEY), then exit.
        Run it with the broker stopped (file store) after adding a new key in front of the old ones.
          --dry-run       list the accounts it would re-seal and check that it could; change nothing
        Exit status: 0 done; 1 failed; 2 a bad setting.
        """,
        "config": """
        usage: token-broker config check
        Validate the BROKER_* environment and the providers file and print the resolved settings: every provider,
        configured or what it lacks, and each API key by name and scopes. Secrets are printed only as set/unset.
        Exit status: 0 valid; 2 a bad setting (the variable is named).
        """,
        "accounts": """
        usage: token-broker accounts list [--provider P] [--json]
               token-broker accounts show ID [--json]
               token-broker accounts delete ID [--yes] [--json]
               token-broker accounts refresh ID [--json]
        The accounts of a running broker, through its API. ID is provider:uid. `token-broker accounts SUB --help`
        says more about each.
        \(accountsCommon)
        """,
        "accounts list": """
        usage: token-broker accounts list [--provider P] [--json]
        List the accounts (GET /accounts): id, status, end user, tags, expiry and last refresh, one line each.
          --provider P    only the accounts of provider P (also --provider=P)
        \(accountsCommon)
        """,
        "accounts show": """
        usage: token-broker accounts show ID [--json]
        Show one account (GET /account?id=ID): provider, status, end user, tags, dates; its token only as a length.
        \(accountsCommon)
        """,
        "accounts delete": """
        usage: token-broker accounts delete ID [--yes] [--json]
        Revoke the account's tokens at the provider where it can, and delete it (DELETE /account?id=ID); say whether
        the provider confirmed the revocation. On a terminal it asks first (y/N on stdin).
          --yes           delete without asking; needed when stdin is not a terminal (else exit 2, nothing deleted)
        \(accountsCommon)
        """,
        "accounts refresh": """
        usage: token-broker accounts refresh ID [--json]
        Refresh the account's token at the provider now (POST /account/refresh?id=ID) and print its new expiry.
        \(accountsCommon)
        """,
        "backup": """
        usage: token-broker backup [--json]
        Ask the running broker (POST /backup) to write a consistent snapshot of every account into its data
        directory (backups/accounts-<UTC time>.snapshot.jsonl); print the file, the number of accounts and bytes.
          --json          print the broker's JSON answer as is
        Reads BROKER_URL (default http://127.0.0.1:8080) and BROKER_API_KEY. Exit status: 0 done; 1 refused or
        unreachable; 2 a bad setting.
        """,
        "restore": """
        usage: token-broker restore FILE [--data-dir DIR] [--force]
        Install a backup as the accounts of a stopped broker's data directory. The encryption key is not in the
        backup: start the broker with the key of the one that wrote it (BROKER_ENCRYPTION_KEY, or its encryption-key
        file copied into the directory); a broker started on restored sealed accounts without it refuses to start.
          --data-dir DIR  the data directory (default BROKER_DATA_DIR, else ./data; also --data-dir=DIR)
          --force         replace the accounts the directory holds, moving them to backups/replaced-<time>/ first
        Exit status: 0 restored; 1 refused (the file, accounts already there, a running broker); 2 a bad setting.
        """,
        "migrate": """
        usage: token-broker migrate --to postgres://USER@HOST:5432/DB
        Copy the configured store into PostgreSQL: the files of BROKER_DATA_DIR (under its lock: stop the broker
        first), or Redis with BROKER_STORE=redis://…. Accounts keep their sealed bytes (start the broker on
        PostgreSQL with the same BROKER_ENCRYPTION_KEY); plaintext records are sealed on the way; pending and dropped
        webhook deliveries are copied; sign-ins in progress, backoff and app tokens are not. The schema is migrated
        first. A run again copies nothing twice and finishes what an interrupted one began; an account already in
        PostgreSQL is replaced only by a source record updated later. The URL is read like BROKER_STORE (password in
        it or BROKER_STORE_PASSWORD_FILE; BROKER_POSTGRES_ALLOW_MD5). Prints both sides' counts and the copy's speed.
          --to URL        the PostgreSQL database to copy into (also --to=URL)
        Exit status: 0 copied and the counts match; 1 failed or the counts differ; 2 a bad argument or setting.
        """,
        "webhooks": """
        usage: token-broker webhooks list
               token-broker webhooks replay ID
        The running broker's webhook outbox, through its API (GET /webhooks, POST /webhooks/replay?id=ID).
          list            the pending and dropped deliveries
          replay ID       send a pending or dropped delivery (evt_….N), or every delivery of an event (evt_…), now
        The broker is at BROKER_URL (default http://127.0.0.1:BROKER_PORT); the API key is BROKER_API_KEY, else the
        first of BROKER_API_KEYS. Exit status: 0 done; 1 refused (the URL that refused is named) or unreachable;
        2 a bad setting.
        """,
        "version": """
        usage: token-broker version (or --version)
        Print the version.
        """,
        "help": """
        usage: token-broker help [COMMAND]   (or COMMAND --help, COMMAND -h)
        Print the usage of COMMAND, or of every command.
        """,
    ]
}
