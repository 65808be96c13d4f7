import Synchronization

/// Remembers what an account update's transform saw or did, since the repository hands back only the stored result.
///
/// A repository may run a transform more than once (Redis retries after a
/// concurrent write); the last run is the one that was applied, and its value
/// is the one kept.
final class TransformWitness<Value: Sendable>: Sendable {
    private let stored: Mutex<Value>

    /// Creates a witness holding `initial`.
    init(_ initial: Value) {
        stored = Mutex(initial)
    }

    /// The value the last run of the transform left.
    var value: Value {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
