import Synchronization
import Testing

/// What one test started and must stop: servers, brokers, child processes, directories.
///
/// Every cleanup registered with ``onEnd(_:)`` runs when the scope ends, the last
/// registered first, whether the test passed, failed a `#require` or threw, so a
/// failing test never leaves a server listening or a process running. Tests get one from
/// ``withTestScope(_:)``, or from the ``ScopedTrait`` (`@Suite(.scoped)`) that runs every
/// test of a suite in its own scope; start-up helpers then register with ``TestScope/current``.
public final class TestScope: Sendable {
    /// The scope of the test running in this task, if any.
    @TaskLocal public static var current: TestScope?

    private let cleanups = Mutex<[@Sendable () async -> Void]>([])

    public init() {}

    /// Runs `cleanup` when the scope ends (before the cleanups registered earlier).
    public func onEnd(_ cleanup: @escaping @Sendable () async -> Void) {
        cleanups.withLock { $0.append(cleanup) }
    }

    /// Runs every cleanup, last registered first; a cleanup registered meanwhile runs too.
    func end() async {
        while let cleanup = cleanups.withLock({ $0.popLast() }) {
            await cleanup()
        }
    }

    /// The current scope; records an issue when there is none, since whatever is started then is never stopped.
    public static func required(
        _ what: String, fileID: String = #fileID, filePath: String = #filePath,
        line: Int = #line, column: Int = #column
    ) -> TestScope? {
        if let current { return current }
        Issue.record(
            "\(what) started outside a TestScope: use @Suite(.scoped) or withTestScope",
            sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
        return nil
    }
}

/// Runs `body` in a new ``TestScope`` (also ``TestScope/current``), then ends the scope whatever `body` did.
public func withTestScope<T: Sendable>(_ body: (TestScope) async throws -> T) async throws -> T {
    let scope = TestScope()
    do {
        let result = try await TestScope.$current.withValue(scope) { try await body(scope) }
        await scope.end()
        return result
    } catch {
        await scope.end()
        throw error
    }
}

/// Runs each test (each case of a parameterized one) in its own ``TestScope``: `@Suite(.scoped)` or `@Test(.scoped)`.
public struct ScopedTrait: TestTrait, SuiteTrait, TestScoping {
    /// A suite's tests each get their own scope.
    public var isRecursive: Bool { true }

    /// A scope per test case; none around a whole suite.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> ScopedTrait? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTestScope { _ in try await function() }
    }
}

extension Trait where Self == ScopedTrait {
    /// Each test runs in its own ``TestScope``, ended when it ends.
    public static var scoped: ScopedTrait { ScopedTrait() }
}
