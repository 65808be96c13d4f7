/// The sub-command and flags `token-broker` was started with, read before anything else so that
/// `--help` never starts, changes or even configures anything.
public enum BrokerCommand: Equatable, Sendable {
    /// Run the broker (the default).
    case serve
    /// Run the broker with a built-in demo provider and throwaway data, for a first look.
    case demo
    /// Ask the configured port for `/healthz` and exit 0 or 1.
    case healthcheck
    /// Re-encrypt every stored account with the current key, then exit; with `dryRun`, only report which would be.
    case rekey(dryRun: Bool)
    /// Validate the environment and the providers file and print the resolved configuration without secrets.
    case configCheck
    /// Ask the running broker for its webhook outbox, or to replay a delivery.
    case webhooks(WebhooksCommand)
    /// List, show, delete or refresh the accounts of a running broker through its HTTP API.
    case accounts(AccountsCommand)
    /// Ask the running broker to write a backup of every account (`POST /backup`); `json` prints its answer as is.
    case backup(json: Bool)
    /// Install a backup as the account snapshot of a stopped broker's data directory.
    case restore(RestoreCommand)
    /// Copy the configured store (files or Redis) into PostgreSQL and count both sides.
    case migrate(MigrateCommand)
    /// Print the version.
    case version
    /// Print the usage of the named command (`accounts delete` names a sub-command's), or of all of them.
    case help(String?)

    /// The commands by name, in the order the usage lists them.
    static let names = [
        "serve", "demo", "healthcheck", "rekey", "config", "accounts", "backup", "restore", "migrate", "webhooks", "version", "help",
    ]

    /// The usage text: every command, one line each.
    public static let usage = """
        usage: token-broker [serve | demo | healthcheck | rekey [--dry-run] | config check | accounts … | backup | restore FILE
                            | migrate --to URL | webhooks … | version | help] [--help]
          serve           run the broker (default); settings come from BROKER_* environment variables
          demo            run the broker with a built-in demo provider (not a real account) and throwaway data; prints what to open
          healthcheck     exit 0 when /healthz on the configured port answers 200, else 1 with the reason on stderr
          rekey           re-encrypt every stored account with the current BROKER_ENCRYPTION_KEY, then exit
            --dry-run     list the accounts it would re-seal and check it could; change nothing
          config check    validate the BROKER_* environment and the providers file; print the resolved settings, secrets as set/unset
          accounts list [--provider P] | show ID | delete ID [--yes] | refresh ID  [--json]
                          the accounts of a running broker, through its API at BROKER_URL (default http://127.0.0.1:8080)
                          with BROKER_API_KEY; --json prints the broker's JSON; exit 1 when the broker refuses;
                          delete asks y/N on a terminal and needs --yes elsewhere
          accounts import FILE
                          POST /accounts once per line of a JSON Lines file (entered credentials or OAuth tokens);
                          prints each line's outcome and goes on past failures; exit 1 when any line failed
          backup [--json] ask the running broker (BROKER_URL, BROKER_API_KEY) to write a consistent snapshot of every account
                          into its data directory (backups/accounts-<UTC time>.snapshot.jsonl); prints the file, accounts, bytes
          restore FILE [--data-dir DIR] [--force]
                          install a backup as the accounts of a stopped broker's data directory (default BROKER_DATA_DIR);
                          refuses a directory that holds accounts unless --force, which moves them to backups/replaced-<time>/;
                          the encryption key is not in the backup: start the broker with the key of the one that wrote it
          migrate --to postgres://…
                          copy the configured store (BROKER_DATA_DIR's files, or BROKER_STORE=redis://…) into PostgreSQL;
                          idempotent and resumable; prints both sides' counts and exits 1 when they differ
          webhooks list         show the running broker's pending and dropped webhook deliveries (BROKER_URL, BROKER_API_KEY)
          webhooks replay ID    send a pending or dropped delivery (evt_….N) or every delivery of an event (evt_…) again now
          version         print the version
          help [COMMAND]  print this text, or COMMAND's own usage and options (also COMMAND --help or -h)
        """

    /// Why the arguments were refused; the message names the argument and ends with the usage.
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        /// The sentence for stderr.
        public let description: String
    }

    /// Reads `arguments` (without the program name): `--help`/`-h` anywhere wins; an unknown
    /// command, an unknown flag or an argument a command does not take is a usage error (exit 2).
    public static func parse(_ arguments: [String]) -> Result<BrokerCommand, UsageError> {
        let first = arguments.first
        let named = first.map { !$0.hasPrefix("-") } ?? false
        if arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
            return .success(.help(helpTopic(arguments.filter { $0 != "--help" && $0 != "-h" })))
        }
        guard let first else { return .success(.serve) }
        if first == "--version" { return arguments.count == 1 ? .success(.version) : .failure(extra(arguments[1])) }
        guard named else { return .failure(UsageError(description: "unknown flag \"\(first)\"")) }
        let rest = arguments.dropFirst()
        switch first {
        case "serve", "demo", "healthcheck", "version":
            if let unexpected = rest.first { return .failure(extra(unexpected)) }
            let commands: [String: BrokerCommand] = ["serve": .serve, "demo": .demo, "healthcheck": .healthcheck, "version": .version]
            return .success(commands[first]!)
        case "rekey":
            var dryRun = false
            for argument in rest {
                guard argument == "--dry-run" else { return .failure(extra(argument)) }
                dryRun = true
            }
            return .success(.rekey(dryRun: dryRun))
        case "accounts":
            return AccountsCommand.parse(rest).map(BrokerCommand.accounts)
        case "backup":
            var json = false
            for argument in rest {
                guard argument == "--json" else { return .failure(extra(argument)) }
                json = true
            }
            return .success(.backup(json: json))
        case "restore":
            return RestoreCommand.parse(rest).map(BrokerCommand.restore)
        case "migrate":
            return MigrateCommand.parse(rest).map(BrokerCommand.migrate)
        case "config":
            guard rest.first == "check" else {
                return .failure(rest.first.map(extra) ?? UsageError(description: "config needs a sub-command: config check"))
            }
            if let unexpected = rest.dropFirst().first { return .failure(extra(unexpected)) }
            return .success(.configCheck)
        case "webhooks":
            switch (rest.first, rest.count) {
            case ("list"?, 1): return .success(.webhooks(.list))
            case ("replay"?, 2): return .success(.webhooks(.replay(rest[rest.startIndex + 1])))
            case ("replay"?, 1): return .failure(UsageError(description: "webhooks replay needs the delivery or event id"))
            case ("list"?, _), ("replay"?, _): return .failure(extra(rest[rest.startIndex + (rest.first == "list" ? 1 : 2)]))
            case (let other?, _): return .failure(extra(other))
            case (nil, _): return .failure(UsageError(description: "webhooks needs a sub-command: webhooks list or webhooks replay ID"))
            }
        case "help":
            guard let topic = rest.first else { return .success(.help(nil)) }
            guard names.contains(topic) else { return .failure(UsageError(description: "unknown command \"\(topic)\"")) }
            let named = helpTopic(Array(rest))
            // `help accounts delete` names a sub-command's usage; anything more is refused.
            let words = named?.split(separator: " ").count ?? 0
            guard rest.count <= words else { return .failure(extra(rest[rest.startIndex + words])) }
            return .success(.help(named))
        default:
            return .failure(UsageError(description: "unknown command \"\(first)\""))
        }
    }

    /// The error for an argument the command does not take.
    private static func extra(_ argument: String) -> UsageError {
        UsageError(description: argument.hasPrefix("-") ? "unknown flag \"\(argument)\"" : "unexpected argument \"\(argument)\"")
    }
}
