/// Stops the process when a fuzzing invariant does not hold, so libFuzzer saves the input as a crash.
///
/// The message is built only on failure; it names the rule, never the input bytes
/// (libFuzzer writes those to the crash file).
public func require(_ condition: Bool, _ rule: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition { fatalError("fuzz invariant broken: \(rule())", file: file, line: line) }
}
