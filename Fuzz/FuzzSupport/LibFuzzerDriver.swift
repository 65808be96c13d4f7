#if FUZZING
/// libFuzzer's driver for programs with their own `main`, linked in by `-sanitize=fuzzer`.
///
/// `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t))`,
/// declared with the C calling convention (`-enable-experimental-feature Extern`, passed by scripts/fuzz).
@_extern(c, "LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ testOneInput: LibFuzzerDriver.TestOneInput
) -> Int32

/// Hands control to libFuzzer's driver, which reads its flags and calls the test function once per input.
///
/// `-sanitize=fuzzer` links libFuzzer, but its own `main` is not used because
/// SwiftPM points `main` at `<Module>_main`; `LLVMFuzzerRunDriver` is libFuzzer's
/// documented entry for programs that keep their own `main`.
public enum LibFuzzerDriver {
    /// libFuzzer's per-input callback: `int LLVMFuzzerTestOneInput(const uint8_t *, size_t)`.
    public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

    /// Runs libFuzzer with the process arguments and returns its exit status.
    public static func run(
        argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, testOneInput: TestOneInput
    ) -> Int32 {
        var count = argc
        var arguments = argv
        return LLVMFuzzerRunDriver(&count, &arguments, testOneInput)
    }
}
#endif
