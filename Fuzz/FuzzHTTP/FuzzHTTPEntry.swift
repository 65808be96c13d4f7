// FuzzHTTP: libFuzzer's entry points for the HTTP/1.1 parser (requests, and responses) when
// `scripts/fuzz` builds it (-DFUZZING, -sanitize=fuzzer,address,
// -parse-as-library); a plain `swift build` makes a stub that says how.
#if FUZZING
import FuzzSupport

/// libFuzzer calls this once per input; a broken invariant stops the process with `fatalError`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    HTTPFuzzCase(bytes: bytes).check()
    ResponseFuzzCase(bytes: bytes).check()
    return 0
}

/// The process entry point (SwiftPM links `main` to `<Module>_main`).
///
/// `FuzzHTTP --frame FILE…` prints how the parser frames each file, one JSON
/// line per file, for the h11 differential check; anything else is handed to libFuzzer.
@_cdecl("FuzzHTTP_main")
public func fuzzHTTPMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    if argc > 1, let first = argv[1], String(cString: first) == "--frame" {
        let files = (2..<max(2, Int(argc))).compactMap { argv[$0].map { String(cString: $0) } }
        return FramingReport.run(files: files)
    }
    return LibFuzzerDriver.run(argc: argc, argv: argv) { data, size in fuzzHTTPTestOneInput(data, size) }
}
#else
import Foundation

/// The plain build's entry point: FuzzHTTP needs the fuzzer runtime, so this only says how to get it.
@main
enum FuzzHTTPStub {
    /// Prints how to build and run the fuzz target, and exits 2.
    static func main() {
        FileHandle.standardError.write(
            Data(
                """
                FuzzHTTP is a libFuzzer target; this plain build only prints this note.
                Build and run it with sanitizers: scripts/fuzz [SECONDS] FuzzHTTP

                """.utf8))
        exit(2)
    }
}
#endif
