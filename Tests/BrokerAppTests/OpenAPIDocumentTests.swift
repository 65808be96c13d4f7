import BrokerCore
import BrokerCrypto
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// docs/openapi.yaml, the JSON the broker serves from it, and the router agree: no route undocumented, no error code unlisted.
@Suite(.scoped) struct OpenAPIDocumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The served document, parsed.
    static func document() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
    }

    /// A broker with the routes `serve` registers.
    static func withBroker(_ body: (BrokerHarness) async throws -> Void) async throws {
        let broker = try BrokerHarness(providersJSON: "{\"providers\": {}}")
        do {
            try await body(broker)
        } catch {
            await broker.stop()
            throw error
        }
        await broker.stop()
    }

    @Test func theEmbeddedJSONWasGeneratedFromTheYAMLAsItIsNow() throws {
        let yaml = try Data(contentsOf: Self.root.appendingPathComponent("docs/openapi.yaml"))
        #expect(
            Hex.encode(SHA256.hash(Array(yaml))) == OpenAPIDocument.sourceSHA256,
            "docs/openapi.yaml changed since OpenAPIDocument+JSON.swift was generated: run scripts/openapi")
        let document = try Self.document()
        #expect(document["openapi"] as? String == "3.1.0")
    }

    @Test func theBrokerServesTheDocument() async throws {
        try await Self.withBroker { broker in
            let reply = try #require(await TestHTTP.send(port: broker.port, target: "/openapi.json"))
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type") == "application/json")
            #expect(reply.body == OpenAPIDocument.json)
        }
    }

    @Test func everyRouteTheBrokerServesIsDocumentedAndNothingElse() async throws {
        let paths = try #require(try Self.document()["paths"] as? [String: [String: Any]])
        let methods = Set(HTTPMethod.allCases.map { $0.rawValue.lowercased() })
        // A path ending in a template (`/flows/{state}`) is served by a prefix route, which the router names `/flows/*`.
        func served(_ path: String) -> String {
            guard path.hasSuffix("}"), let open = path.lastIndex(of: "{") else { return path }
            return path[..<open] + "*"
        }
        let documented = Set(
            paths.flatMap { path, item in item.keys.filter(methods.contains).map { "\($0.uppercased()) \(served(path))" } })
        try await Self.withBroker { broker in
            let served = Set(broker.broker.server.router.endpoints.map { "\($0.method.rawValue) \($0.path)" })
            #expect(served.contains("GET /openapi.json") && served.contains("POST /account/refresh"))
            #expect(served.subtracting(documented).sorted() == [], "served but missing from docs/openapi.yaml")
            #expect(documented.subtracting(served).sorted() == [], "in docs/openapi.yaml but not served")
        }
    }

    /// Every case of the core's error enum; the switch stops compiling when a case is added and not listed here.
    static var everyBrokerError: [BrokerError] {
        let all: [BrokerError] = [
            .unknownProvider("p"), .providerNotConfigured("p", missing: ["X"]), .providerUnavailable("p", reason: "r"), .invalidReturnTo,
            .invalidState, .accessDenied,
            .upstreamError(step: "s", reason: "r"), .upstreamTimeout(step: "s"), .notFound, .expired, .reauthorizationRequired,
            .refreshExhausted, .notRefreshable, .unauthorized, .badRequest("b"), .storageUnavailable("s"), .recordDamaged("r"),
            .ambiguousAccount(provider: "p"), .credentialNotForwardable(reason: "r"), .connectSessionGone, .reconnectMismatch,
            .insufficientPermissions("s"), .insufficientScope(missing: ["write"]), .credentialInvalid(provider: "p", status: 401),
            .invalidSetting(name: "subdomain", reason: "r"), .accountInvalid,
        ]
        for error in all {
            switch error {
            case .unknownProvider, .providerNotConfigured, .providerUnavailable, .invalidReturnTo, .invalidState, .accessDenied,
                .upstreamError,
                .upstreamTimeout, .notFound, .expired, .reauthorizationRequired, .refreshExhausted, .notRefreshable, .unauthorized,
                .badRequest,
                .storageUnavailable, .recordDamaged, .ambiguousAccount, .credentialNotForwardable, .connectSessionGone,
                .reconnectMismatch, .insufficientPermissions, .insufficientScope, .credentialInvalid, .invalidSetting, .accountInvalid:
                break
            }
        }
        return all
    }

    @Test func everyErrorCodeIsListedUnderItsStatus() throws {
        let listed = try ErrorCodeIndex(document: Self.document())
        for error in Self.everyBrokerError {
            #expect(
                listed.codes[error.status.code, default: []].contains(error.code),
                "\(error.code) is never listed under \(error.status.code) in docs/openapi.yaml")
        }
        // The connect page's refusal and the metrics route's start-up answer are not core errors.
        #expect(listed.codes[403, default: []].contains("forbidden"))
        #expect(listed.codes[503, default: []].contains("starting"))
        // What the HTTP server answers before any handler.
        let transport: [HTTPParseError] = [
            .badRequest("b"), .uriTooLong, .headersTooLarge, .contentTooLarge, .notImplemented("n"),
            .versionNotSupported, .expectationFailed,
        ]
        let serverCodes = transport.map(\.code) + ["not_found", "method_not_allowed", "request_timeout", "over_capacity"]
        #expect(Set(serverCodes).subtracting(listed.transport).sorted() == [])
    }

    /// The `error` values the document lists, by status, gathered from every operation's JSON error schemas.
    struct ErrorCodeIndex {
        var codes: [Int: Set<String>] = [:]
        var transport: Set<String> = []
        let components: [String: Any]

        init(document: [String: Any]) throws {
            components = try #require(document["components"] as? [String: Any])
            transport = values(of: resolve(["$ref": "#/components/schemas/TransportError"]))
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            for item in paths.values {
                for case let operation as [String: Any] in item.values {
                    for case (let status, let response as [String: Any]) in operation["responses"] as? [String: Any] ?? [:] {
                        let content = resolve(response)["content"] as? [String: Any]
                        guard let code = Int(status), let json = content?["application/json"] as? [String: Any],
                            let schema = json["schema"] as? [String: Any]
                        else { continue }
                        codes[code, default: []].formUnion(values(of: schema))
                    }
                }
            }
        }

        /// `node` with a `$ref` into the components followed; a node with siblings of its `$ref` stays as it is.
        func resolve(_ node: [String: Any]) -> [String: Any] {
            guard let ref = node["$ref"] as? String, node.count == 1 else { return node }
            let parts = ref.split(separator: "/").dropFirst(2).map(String.init)
            guard parts.count == 2, let group = components[parts[0]] as? [String: Any],
                let target = group[parts[1]] as? [String: Any]
            else { return node }
            return resolve(target)
        }

        /// The `enum` or `const` values of the schema's `error` property, through `$ref`s, `allOf` and `oneOf`.
        ///
        /// With `allOf` every subschema must hold, so the values are those all subschemas that name any allow.
        func values(of schema: [String: Any]) -> Set<String> {
            let node = resolve(schema)
            if let error = (node["properties"] as? [String: Any])?["error"] as? [String: Any] {
                if let constant = error["const"] as? String { return [constant] }
                if let list = error["enum"] as? [String] { return Set(list) }
            }
            if let parts = node["allOf"] as? [[String: Any]] {
                let named = parts.map(values(of:)).filter { !$0.isEmpty }
                return named.dropFirst().reduce(named.first ?? []) { $0.intersection($1) }
            }
            // With `oneOf` any subschema may hold: the values are those any of them allows.
            if let parts = node["oneOf"] as? [[String: Any]] {
                return parts.map(values(of:)).reduce(into: Set<String>()) { $0.formUnion($1) }
            }
            return []
        }
    }
}
