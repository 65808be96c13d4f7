import BrokerTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The spawner every process-starting test relies on: output, exit status, signals, descriptors.
@Suite struct ChildProcessTests {
    @Test func capturesBothStreamsAndTheExitStatus() throws {
        let child = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"],
            environment: ["PATH": "/usr/bin:/bin"], stdout: .capture, stderr: .capture)
        #expect(child.waitUntilExit() == 3)
        child.drainOutput()
        #expect(child.outputText == "out\n")
        #expect(child.errorText == "err\n")
    }

    @Test func aSignalEndsTheChildWithStatus128PlusItsNumber() throws {
        let child = try ChildProcess(executable: "/bin/sleep", arguments: ["30"], environment: [:])
        #expect(child.isRunning)
        child.signal(SIGTERM)
        #expect(child.waitForExit(timeout: 60) == 128 + SIGTERM)
        #expect(!child.isRunning)
    }

    @Test func theChildGetsExactlyItsEnvironmentAndNoInheritedDescriptors() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        let child = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "echo $ONLY; ls /proc/$$/fd"],
            environment: ["ONLY": "this", "PATH": "/usr/bin:/bin"], stdout: .capture)
        #expect(child.waitUntilExit() == 0)
        child.drainOutput()
        let lines = child.outputText.split(separator: "\n").map(String.init)
        #expect(lines.first == "this")
        #expect(Set(lines.dropFirst()) == ["0", "1", "2"], "descriptors open in the child: \(lines.dropFirst())")
    }

    @Test func aMissingExecutableIsAnErrorNotAChild() {
        #expect(throws: ChildProcessError.self) {
            _ = try ChildProcess(executable: "/nonexistent/token-broker", environment: [:])
        }
    }
}
