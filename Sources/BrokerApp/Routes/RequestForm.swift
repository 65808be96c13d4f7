import BrokerHTTP
import Foundation

/// The fields of a request given as query, `application/x-www-form-urlencoded` body or a
/// flat JSON object body; body fields win over query ones.
struct RequestForm {
    private var fields: [String: String] = [:]

    init(_ request: Request) {
        for item in request.queryItems where fields[item.name] == nil { fields[item.name] = item.value }
        let type = (request.headers["Content-Type"] ?? "").lowercased()
        if type.hasPrefix("application/json") {
            if let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] {
                for (key, value) in object { if let text = value as? String { fields[key] = text } }
            }
        } else if type.hasPrefix("application/x-www-form-urlencoded") {
            for item in URLEncodedForm.parse(String(decoding: request.body, as: UTF8.self)) { fields[item.name] = item.value }
        }
    }

    subscript(name: String) -> String? { fields[name] }
}
