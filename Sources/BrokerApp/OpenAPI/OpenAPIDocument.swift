import BrokerHTTP

/// The OpenAPI 3.1 description of every route the broker serves, answered at `GET /openapi.json`.
///
/// docs/openapi.yaml is the source, written for people. `scripts/openapi` checks it and
/// converts it to JSON in `OpenAPIDocument+JSON.swift` when it changes, so the binary needs no
/// YAML parser and no resource file at run time. `OpenAPIDocumentTests` fails when the YAML
/// changed without regenerating, or when a route of the router is missing from the document;
/// `scripts/api-contract` validates real answers against it.
enum OpenAPIDocument {
    /// The `GET /openapi.json` answer, built once.
    static let response = Response(
        status: .ok,
        headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-cache")]),
        body: Array(json.utf8))
}
