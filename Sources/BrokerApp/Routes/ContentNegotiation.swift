import BrokerHTTP
import Foundation

/// Decides whether a client gets a page for people (HTML) or the API's JSON, from its `Accept` field.
///
/// Browsers list `text/html` in `Accept` on navigations; curl sends `*/*` and API
/// clients `application/json`. Only an explicit `text/html` with a weight above
/// zero selects HTML, and not when `application/json` is weighted higher, so every
/// API client keeps the JSON it had before.
enum ContentNegotiation {
    /// What to answer with.
    enum Representation: Equatable {
        /// A page for people.
        case html
        /// The API's JSON.
        case json
    }

    /// The representation for this request.
    static func representation(for request: Request) -> Representation {
        // RFC 9110 §5.3: repeated fields are one comma-separated list.
        let values = request.headers.values(for: "Accept")
        return representation(accept: values.isEmpty ? nil : values.joined(separator: ","))
    }

    /// The representation for an `Accept` field value (nil when the field is absent).
    static func representation(accept: String?) -> Representation {
        guard let accept else { return .json }
        var html: Double?
        var json: Double?
        for range in mediaRanges(accept) {
            // RFC 9110 §12.5.1: the most specific listed range decides a type's weight; here only exact types count.
            switch range.type {
            case "text/html": html = max(html ?? 0, range.weight)
            case "application/json": json = max(json ?? 0, range.weight)
            default: break
            }
        }
        guard let html, html > 0 else { return .json }
        if let json, json > html { return .json }
        return .html
    }

    /// The media ranges of an `Accept` value, lowercased, with their weights (1 when no `q`).
    static func mediaRanges(_ accept: String) -> [(type: String, weight: Double)] {
        accept.split(separator: ",").compactMap { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = parts.first, !type.isEmpty else { return nil }
            var weight = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[0] == "q" else { continue }
                weight = qvalue(pair[1]) ?? 0
            }
            return (type, weight)
        }
    }

    /// RFC 9110 §12.4.2: `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`; anything else is nil.
    static func qvalue(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1"), bytes.count <= 5 else { return nil }
        guard bytes.count > 1 else { return Double(first - UInt8(ascii: "0")) }
        let digits = bytes.dropFirst(2)
        guard bytes[1] == UInt8(ascii: "."), digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        if first == UInt8(ascii: "1") { return digits.allSatisfy { $0 == UInt8(ascii: "0") } ? 1 : nil }
        var fraction = 0.0
        var scale = 0.1
        for digit in digits {
            fraction += Double(digit - UInt8(ascii: "0")) * scale
            scale /= 10
        }
        return fraction
    }
}

extension Request {
    /// Whether this request's client should get a page for people rather than JSON.
    var wantsHTML: Bool { ContentNegotiation.representation(for: self) == .html }
}
