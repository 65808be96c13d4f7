/// `token-broker accounts list|show ID|delete ID [--yes]|refresh ID|import FILE [--json]`: what to ask a running broker, parsed.
public struct AccountsCommand: Equatable, Sendable {
    /// The request to make.
    public enum Action: Equatable, Sendable {
        /// `GET /accounts`, of one provider when given.
        case list(provider: String?)
        /// `GET /account?id=ID`.
        case show(String)
        /// `DELETE /account?id=ID`.
        case delete(String)
        /// `POST /account/refresh?id=ID`.
        case refresh(String)
        /// `POST /accounts` once per line of a JSON Lines file (a path), each line one body.
        case importFile(String)
    }

    /// The request to make.
    public var action: Action
    /// Print the broker's JSON instead of lines for people.
    public var json: Bool
    /// For `delete`: go ahead without asking (`--yes`); without it the command asks on a terminal and refuses elsewhere.
    public var yes: Bool

    /// Creates a command.
    public init(_ action: Action, json: Bool = false, yes: Bool = false) {
        self.action = action
        self.json = json
        self.yes = yes
    }

    /// The sub-commands, in the order the usage lists them.
    static let names = ["list", "show", "delete", "refresh", "import"]

    /// Reads the arguments after `accounts` (`--help` is handled before): a sub-command, its account id
    /// (none for `list`), `--json`, for `list` `--provider NAME` (or `--provider=NAME`), for `delete` `--yes` (or `-y`).
    static func parse(_ arguments: ArraySlice<String>) -> Result<AccountsCommand, BrokerCommand.UsageError> {
        func refuse(_ text: String) -> Result<AccountsCommand, BrokerCommand.UsageError> {
            .failure(BrokerCommand.UsageError(description: text))
        }
        guard let name = arguments.first else {
            return refuse("accounts needs a sub-command: accounts list, show ID, delete ID or refresh ID")
        }
        guard names.contains(name) else {
            return refuse(name.hasPrefix("-") ? "unknown flag \"\(name)\"" : "unknown command \"accounts \(name)\"")
        }
        var json = false
        var yes = false
        var provider: String?
        var positional: [String] = []
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            if argument == "--json" {
                json = true
            } else if name == "delete", argument == "--yes" || argument == "-y" {
                yes = true
            } else if name == "list", argument == "--provider" || argument.hasPrefix("--provider=") {
                let value = argument == "--provider" ? rest.popFirst() : String(argument.dropFirst("--provider=".count))
                guard let value, !value.isEmpty, !value.hasPrefix("-") else { return refuse("--provider needs a provider name") }
                provider = value
            } else if argument.hasPrefix("-") {
                return refuse("unknown flag \"\(argument)\"")
            } else {
                positional.append(argument)
            }
        }
        if name == "list" {
            if let extra = positional.first { return refuse("unexpected argument \"\(extra)\"") }
            return .success(AccountsCommand(.list(provider: provider), json: json))
        }
        guard let id = positional.first, !id.isEmpty else {
            return refuse(
                name == "import" ? "accounts import needs a file (JSON Lines)" : "accounts \(name) needs an account id (provider:uid)")
        }
        if positional.count > 1 { return refuse("unexpected argument \"\(positional[1])\"") }
        let action: Action =
            switch name {
            case "show": .show(id)
            case "delete": .delete(id)
            case "import": .importFile(id)
            default: .refresh(id)
            }
        return .success(AccountsCommand(action, json: json, yes: yes))
    }
}
