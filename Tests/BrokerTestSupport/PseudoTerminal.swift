import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal pair, for running a command whose standard input is a terminal (`isatty(0)` is true), as when
/// a person types at it: the child reads ``terminal``; what is written to the controlling side is its typing.
public final class PseudoTerminal: Sendable {
    /// The controlling side: written to, it is what the person types.
    public let controller: Int32
    /// The terminal side, to give the child as its stdin.
    public let terminal: Int32

    /// Opens a pair (posix_openpt, grantpt, unlockpt, then the terminal by name), neither becoming a controlling tty.
    ///
    /// The four functions are looked up at run time: the Glibc module does not export them (they need `_XOPEN_SOURCE`).
    public init() throws {
        typealias OnDescriptor = @convention(c) (Int32) -> Int32
        typealias Name = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
        func symbol<T>(_ name: String, _: T.Type) throws -> T {
            guard let address = dlsym(nil, name) else { throw ChildProcessError("\(name) not found") }
            return unsafeBitCast(address, to: T.self)
        }
        let openpt = try symbol("posix_openpt", OnDescriptor.self), grant = try symbol("grantpt", OnDescriptor.self)
        let unlock = try symbol("unlockpt", OnDescriptor.self), name = try symbol("ptsname", Name.self)
        let controller = openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard controller >= 0 else { throw ChildProcessError("posix_openpt failed: errno \(errno)") }
        guard grant(controller) == 0, unlock(controller) == 0, let path = name(controller) else {
            close(controller)
            throw ChildProcessError("cannot unlock the pseudo-terminal: errno \(errno)")
        }
        let terminal = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else {
            close(controller)
            throw ChildProcessError("cannot open \(String(cString: path)): errno \(errno)")
        }
        self.controller = controller
        self.terminal = terminal
    }

    /// Types `text` (a line ends with "\n"): the terminal's line discipline hands it to the child's next read.
    public func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(controller, $0.baseAddress, $0.count) }
    }

    deinit {
        close(terminal)
        close(controller)
    }
}
