// FuzzDecoders: libFuzzer's entry points for the decoders of untrusted bytes
// (providers file, account and flow records, provider responses, RESP2) when
// `scripts/fuzz` builds it; a plain `swift build` makes a stub that says how.
#if FUZZING
import FuzzSupport

/// libFuzzer calls this once per input; a broken invariant stops the process with `fatalError`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecodersTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    DecoderFuzzCase(DecoderInput(bytes)).check()
    return 0
}

/// The process entry point (SwiftPM links `main` to `<Module>_main`).
///
/// `FuzzDecoders --seeds DIR` writes the seed corpus, made by the real encoders;
/// anything else is handed to libFuzzer.
@_cdecl("FuzzDecoders_main")
public func fuzzDecodersMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    if argc == 3, let flag = argv[1], String(cString: flag) == "--seeds", let dir = argv[2] {
        return DecoderSeeds.write(to: String(cString: dir))
    }
    return LibFuzzerDriver.run(argc: argc, argv: argv) { data, size in fuzzDecodersTestOneInput(data, size) }
}
#else
import Foundation

/// The plain build's entry point: FuzzDecoders needs the fuzzer runtime, so this only says how to get it.
@main
enum FuzzDecodersStub {
    /// Prints how to build and run the fuzz target, and exits 2.
    static func main() {
        FileHandle.standardError.write(
            Data(
                """
                FuzzDecoders is a libFuzzer target; this plain build only prints this note.
                Build and run it with sanitizers: scripts/fuzz [SECONDS] FuzzDecoders

                """.utf8))
        exit(2)
    }
}
#endif
