import BrokerCrypto
import BrokerHTTP
import Foundation

/// The `--frame` mode: how the parser frames each file, one JSON line per file, for `scripts/fuzz.d/h11_diff.py`.
///
/// A line holds the file name, the complete requests (method, target, version,
/// keep-alive, framing, body length and SHA-256, byte offsets) and how the input
/// ended: `idle`, `partial`, or `error` with status, message and the offset of
/// the rejected request. Parsed whole, with the service's default limits.
enum FramingReport {
    /// Prints one line per file; returns 0, or 1 when a file cannot be read.
    static func run(files: [String]) -> Int32 {
        var status: Int32 = 0
        for path in files {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("FuzzHTTP --frame: cannot read \(path)\n".utf8))
                status = 1
                continue
            }
            let outcome = ParserRun.deliver(Array(data), cuts: [], limits: HTTPParserLimits())
            print(line(file: path, outcome: outcome))
        }
        return status
    }

    /// The JSON line for one file.
    static func line(file: String, outcome: RunOutcome) -> String {
        let requests = outcome.requests.map { r in
            "{\"method\":\(quoted(r.method.rawValue)),\"target\":\(quoted(r.target)),"
                + "\"version\":\"\(r.version.major).\(r.version.minor)\",\"keep_alive\":\(r.keepAlive),"
                + "\"framing\":\"\(r.framingName)\",\"body_length\":\(r.body.count),"
                + "\"body_sha256\":\"\(Hex.encode(SHA256.hash(r.body)))\","
                + "\"start\":\(r.start),\"head_end\":\(r.headEnd),\"end\":\(r.end)}"
        }
        let ending: String
        switch outcome.ending {
        case .idle:
            ending = "\"ending\":\"idle\""
        case .partial(let headSeen, let unconsumed):
            ending = "\"ending\":\"partial\",\"head_seen\":\(headSeen),\"unconsumed\":\(unconsumed)"
        case .failed(let error, let at):
            ending = "\"ending\":\"error\",\"status\":\(error.status.code),\"message\":\(quoted(error.message)),\"at\":\(at)"
        }
        return "{\"file\":\(quoted(file)),\"requests\":[\(requests.joined(separator: ","))],\(ending)}"
    }

    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
