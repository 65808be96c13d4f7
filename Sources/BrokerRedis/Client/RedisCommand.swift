/// One Redis command as its binary-safe arguments, the command name first.
///
/// Text arguments are sent as their UTF-8 bytes; a byte argument (an
/// encrypted record, say) goes out unchanged, whatever bytes it holds.
public struct RedisCommand: Sendable, Equatable, ExpressibleByArrayLiteral {
    /// The arguments as sent, the command name first.
    public var arguments: [[UInt8]]

    /// A command of text arguments, such as `RedisCommand("SET", "key", "value")`.
    public init(_ arguments: String...) {
        self.arguments = arguments.map { Array($0.utf8) }
    }

    /// A command of text arguments from an array literal.
    public init(arrayLiteral arguments: String...) {
        self.arguments = arguments.map { Array($0.utf8) }
    }

    /// A command of text arguments from an array.
    public init(_ arguments: [String]) {
        self.arguments = arguments.map { Array($0.utf8) }
    }

    /// A command of byte arguments.
    public init(bytes arguments: [[UInt8]]) {
        self.arguments = arguments
    }

    /// The command name, upper-cased, for messages; never an argument, which may be a secret.
    public var name: String {
        arguments.first.map { String(decoding: $0, as: UTF8.self).uppercased() } ?? "(empty)"
    }
}
