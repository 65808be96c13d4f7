import Synchronization

/// The id that names one request in the logs, the audit trail and the `X-Request-Id` response field.
///
/// A client's own `X-Request-Id` is kept when it is 1–128 bytes of printable ASCII; anything else is replaced
/// by a generated id: a random prefix drawn once per process and a counter, so making one costs no system call.
public enum RequestID {
    /// The request and response field carrying the id.
    public static let fieldName = "X-Request-Id"
    /// The longest id accepted from a client, in bytes.
    public static let maximumBytes = 128

    /// The id of the request whose asynchronous handler is running in this task (and the tasks it starts), so a log
    /// line written anywhere below the handler carries it; nil outside a request.
    @TaskLocal public static var current: String?

    private static let prefix: String = {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)
        return String(decoding: (0..<8).map { _ in alphabet[Int(generator.next(upperBound: UInt8(alphabet.count)))] }, as: UTF8.self)
    }()
    private static let counter = Atomic<UInt64>(0)

    /// The client's id when it is acceptable, else a new one.
    public static func resolve(_ sent: String?) -> String {
        if let sent, isAcceptable(sent) { return sent }
        return generate()
    }

    /// Whether `value` is 1–128 bytes, each printable ASCII (space through `~`).
    public static func isAcceptable(_ value: String) -> Bool {
        let bytes = value.utf8
        return (1...maximumBytes).contains(bytes.count) && bytes.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// A new id: the process's random prefix, `-`, and a counter in base 36 (`k3v9x0qa-1b`).
    public static func generate() -> String {
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return prefix + "-" + String(n, radix: 36)
    }
}
