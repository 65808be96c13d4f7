#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Cryptographically secure random bytes from the kernel, for state values, nonces, PKCE verifiers and keys.
public enum SecureRandom {
    /// Returns `count` random bytes read with getrandom(2).
    ///
    /// Blocks only until the kernel pool is first initialized. A failure other than EINTR
    /// means the process cannot produce secrets at all, so it stops rather than return weak bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "SecureRandom.bytes: negative count")
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { buffer in
            var filled = 0
            while filled < count {
                let read = fill(buffer.baseAddress! + filled, count - filled)
                if read < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    fatalError("SecureRandom: getrandom failed with errno \(code)")
                }
                // getrandom(2): reads above 256 bytes may return fewer bytes than asked; keep going.
                filled += read
            }
        }
        return out
    }

    /// Returns a URL-safe random token: `byteCount` random bytes as unpadded base64url (43 characters for 32 bytes).
    public static func token(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(byteCount))
    }

    #if canImport(Glibc)
    /// The C signature of getrandom(2): `ssize_t getrandom(void *buf, size_t buflen, unsigned int flags)`.
    private typealias GetRandom = @convention(c) (UnsafeMutableRawPointer?, Int, UInt32) -> Int

    /// glibc's getrandom, looked up once: the Glibc module does not import <sys/random.h>,
    /// so the symbol is resolved from the already-loaded C library instead.
    private static let getrandom: GetRandom = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "getrandom") else {
            fatalError("SecureRandom: getrandom(2) is not available in this C library")
        }
        return unsafeBitCast(symbol, to: GetRandom.self)
    }()

    /// Asks the kernel for up to `length` bytes; returns how many arrived, or -1 with errno set.
    private static func fill(_ pointer: UnsafeMutableRawPointer, _ length: Int) -> Int {
        getrandom(pointer, length, 0)
    }
    #else
    /// Asks the system for up to 256 bytes; returns how many arrived, or -1 with errno set.
    private static func fill(_ pointer: UnsafeMutableRawPointer, _ length: Int) -> Int {
        let chunk = min(length, 256)
        return getentropy(pointer, chunk) == 0 ? chunk : -1
    }
    #endif
}
