// FuzzProviders: libFuzzer's entry points for provider answers run through the real
// clients and on into an account record, when `scripts/fuzz` builds it; a plain
// `swift build` makes a stub that says how.
#if FUZZING
import FuzzSupport

/// libFuzzer calls this once per input; a broken invariant stops the process with `fatalError`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProvidersTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    ProviderFuzzCase(bytes).check()
    return 0
}

/// The process entry point (SwiftPM links `main` to `<Module>_main`).
///
/// `FuzzProviders --seeds DIR` writes the seed corpus (the providers' documented
/// answers and the hostile ones found from outside); anything else goes to libFuzzer.
@_cdecl("FuzzProviders_main")
public func fuzzProvidersMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    if argc == 3, let flag = argv[1], String(cString: flag) == "--seeds", let dir = argv[2] {
        return ProviderSeeds.write(to: String(cString: dir))
    }
    return LibFuzzerDriver.run(argc: argc, argv: argv) { data, size in fuzzProvidersTestOneInput(data, size) }
}
#else
import Foundation

/// The plain build's entry point: FuzzProviders needs the fuzzer runtime, so this only says how to get it.
@main
enum FuzzProvidersStub {
    /// Prints how to build and run the fuzz target, and exits 2.
    static func main() {
        FileHandle.standardError.write(
            Data(
                """
                FuzzProviders is a libFuzzer target; this plain build only prints this note.
                Build and run it with sanitizers: scripts/fuzz [SECONDS] FuzzProviders

                """.utf8))
        exit(2)
    }
}
#endif
