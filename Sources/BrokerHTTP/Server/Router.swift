/// Maps method and exact path (or a path prefix) to a handler, and says 404 or 405 (with `Allow`) otherwise.
public struct Router: Sendable {
    /// A request handler: synchronous ones run on the connection's queue without a task hop;
    /// asynchronous ones run as a task and never hold up other connections.
    public enum Handler: Sendable {
        /// A handler that answers at once (health, metrics, in-memory reads).
        case sync(@Sendable (Request) -> Response)
        /// A handler that may wait (upstream calls, disk writes).
        case async(@Sendable (Request) async -> Response)
        /// A fast path that answers at once when it can (nil when it cannot), and a handler
        /// that may wait for the rest: a memory read served inline, a miss or a refresh as a task.
        case fastPath(@Sendable (Request) -> Response?, otherwise: @Sendable (Request) async -> Response)
        /// A handler that starts as soon as the head is read and reads the body as it arrives
        /// (``Request/bodyStream``), up to `maxBodyBytes` instead of the server's limit; a request whose head
        /// says there is no body gets an empty `body` and no stream.
        case streaming(@Sendable (Request) async -> Response, maxBodyBytes: Int)
    }

    /// How the server reads a request body for its route.
    public enum BodyMode: Sendable, Equatable {
        /// Whole, up to the server's limit, before the handler runs.
        case buffered
        /// Piece by piece while the handler runs, up to this many bytes.
        case streamed(limit: Int)
    }

    /// What the router decided for one request.
    public enum Resolution: Sendable {
        /// A handler, with the index of its route for metrics.
        case handler(Handler, route: Int)
        /// The path exists but not for this method (RFC 9110 §15.5.6).
        case methodNotAllowed(allow: String, route: Int)
        /// No route has this path.
        case notFound
    }

    struct Route: Sendable {
        let path: String
        var handlers: [HTTPMethod: Handler]
        /// Whether the route's handler tasks prefer the connection's worker as their executor.
        var onWorker = false
    }

    private(set) var routes: [Route] = []
    private var index: [String: Int] = [:]
    /// Routes taking every path under a prefix, as (prefix, index into `routes`), in registration order.
    private var prefixes: [(prefix: String, route: Int)] = []

    /// How the server renders the answers it gives without a handler (404, 405, and the transport's own 400, 408,
    /// 413, 431, 503…); the application sets its own so they look like its other errors.
    public var refusals: RefusalRenderer

    /// Creates an empty router whose refusals are rendered by `refusals`.
    public init(refusals: RefusalRenderer = .plainText) {
        self.refusals = refusals
    }

    /// The route paths in registration order; metrics label routes with them.
    public var paths: [String] { routes.map(\.path) }

    /// Every method and path a handler is registered for, by path in registration order and by method in
    /// ``HTTPMethod`` order; HEAD is listed only where it has a handler of its own (GET answers it otherwise).
    public var endpoints: [(method: HTTPMethod, path: String)] {
        routes.flatMap { route in HTTPMethod.allCases.filter { route.handlers[$0] != nil }.map { ($0, route.path) } }
    }

    /// Registers `handler` for `method` on the exact `path`.
    ///
    /// With `onWorker`, an asynchronous handler of the route runs as a task that prefers the worker reading its
    /// connection as its executor (SE-0417), not the global pool: it starts, resumes after each wait and hands its
    /// answer back on that worker's thread, and an ``HTTPClient`` call it makes takes a connection on the same worker,
    /// so a call that waits on a provider costs no thread wake-up. Only for handlers that do little work between
    /// waits and never block the thread (blocking I/O goes to its own threads): while such a task runs, the worker's
    /// other sockets wait. The choice is the path's: once one method's registration asks for it, every method's
    /// handler on the path runs so.
    public mutating func add(_ method: HTTPMethod, _ path: String, _ handler: Handler, onWorker: Bool = false) {
        if let i = index[path] {
            routes[i].handlers[method] = handler
            routes[i].onWorker = routes[i].onWorker || onWorker
        } else {
            index[path] = routes.count
            routes.append(Route(path: path, handlers: [method: handler], onWorker: onWorker))
        }
    }

    /// Registers `handler` for `method` on every path that starts with `prefix` and is longer than it
    /// (`/authenticate/` takes `/authenticate/abc`); exact paths are matched first. Metrics label the route `prefix*`.
    /// `onWorker` as for exact paths.
    public mutating func add(_ method: HTTPMethod, prefix: String, _ handler: Handler, onWorker: Bool = false) {
        let label = prefix + "*"
        if let i = index[label] {
            routes[i].handlers[method] = handler
            routes[i].onWorker = routes[i].onWorker || onWorker
        } else {
            index[label] = routes.count
            prefixes.append((prefix, routes.count))
            routes.append(Route(path: label, handlers: [method: handler], onWorker: onWorker))
        }
    }

    /// Whether the handler tasks of route `route` (an index ``resolve(_:_:)`` gave) run on their connection's worker.
    func runsOnWorker(_ route: Int) -> Bool {
        routes.indices.contains(route) && routes[route].onWorker
    }

    /// Registers a synchronous handler.
    public mutating func get(_ path: String, _ body: @escaping @Sendable (Request) -> Response) {
        add(.GET, path, .sync(body))
    }

    /// Finds the handler for a method and path; HEAD falls back to GET (RFC 9110 §9.3.2).
    public func resolve(_ method: HTTPMethod, _ path: String) -> Resolution {
        guard let i = index[path] ?? prefixRoute(path) else { return .notFound }
        let route = routes[i]
        if let handler = route.handlers[method] { return .handler(handler, route: i) }
        if method == .HEAD, let handler = route.handlers[.GET] { return .handler(handler, route: i) }
        return .methodNotAllowed(allow: allowed(route), route: i)
    }

    /// How the body of a request for `method` and `path` is read: streamed for a ``Handler/streaming`` route.
    public func bodyMode(_ method: HTTPMethod, _ path: String) -> BodyMode {
        guard case .handler(.streaming(_, let limit), _) = resolve(method, path) else { return .buffered }
        return .streamed(limit: limit)
    }

    /// Whether any route streams its body; a server without one never defers a body to ask.
    public var hasStreamingRoute: Bool {
        routes.contains { route in
            route.handlers.values.contains {
                if case .streaming = $0 { return true }
                return false
            }
        }
    }

    /// The index of the first prefix route that takes `path`.
    private func prefixRoute(_ path: String) -> Int? {
        // UTF-8 lengths, not character counts (a walk over the whole path per prefix): a request's path is visible
        // ASCII (the parser refuses other bytes in a target), where the two are the same.
        let length = path.utf8.count
        for entry in prefixes where length > entry.prefix.utf8.count && path.hasPrefix(entry.prefix) {
            return entry.route
        }
        return nil
    }

    /// The 404 or 405 answer the server gives a request no handler takes, and the route index for metrics.
    public func routingFailure(_ method: HTTPMethod, _ path: String) -> (response: Response, route: Int?) {
        switch resolve(method, path) {
        case .methodNotAllowed(let allow, let route):
            var headers = HTTPHeaders()
            headers.add(name: "Allow", value: allow)
            let refusal = Refusal(
                status: .methodNotAllowed, code: "method_not_allowed",
                message: "\(method.rawValue) is not allowed here; use \(allow).", headers: headers)
            return (refusals.response(refusal), route)
        case .notFound, .handler:
            return (refusals.response(Refusal(status: .notFound, code: "not_found", message: "No such endpoint.")), nil)
        }
    }

    /// Answers `request` in process, as the server would after parsing it: the handler's response, or the
    /// 404 or 405 answer. For tests of routes where a socket adds nothing; the server adds `Date`,
    /// `Content-Length` and `Connection` on the wire, and leaves out a HEAD response's body.
    public func respond(to request: Request) async -> Response {
        switch resolve(request.method, request.path) {
        case .handler(.sync(let handler), _):
            return handler(request)
        case .handler(.async(let handler), _):
            return await RequestID.$current.withValue(request.id) { await handler(request) }
        case .handler(.fastPath(let fast, let otherwise), _):
            if let response = fast(request) { return response }
            return await RequestID.$current.withValue(request.id) { await otherwise(request) }
        case .handler(.streaming(let handler, _), _):
            return await RequestID.$current.withValue(request.id) { await handler(request) }
        case .methodNotAllowed, .notFound:
            return routingFailure(request.method, request.path).response
        }
    }

    private func allowed(_ route: Route) -> String {
        var methods = Set(route.handlers.keys)
        if methods.contains(.GET) { methods.insert(.HEAD) }
        return HTTPMethod.allCases.filter(methods.contains).map(\.rawValue).joined(separator: ", ")
    }
}
