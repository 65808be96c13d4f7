import BrokerCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PostgresConnection {
    /// Reconnects when the socket is closed or the server ended the session while it was idle; on the queue.
    func connectIfNeeded(deadline: UInt64) throws(PostgresError) {
        if fd >= 0, idleSessionIsStale() { disconnect() }
        if fd < 0 { try connect(deadline: deadline) }
    }

    /// Tries each host in order (libpq's rule): one that cannot be reached, is starting or stopping, or is not
    /// read-write when that is asked for is skipped; a refused login stops the search, since the next host
    /// would refuse the same credentials.
    private func connect(deadline: UInt64) throws(PostgresError) {
        var reasons: [String] = []
        for endpoint in configuration.endpoints {
            let hostDeadline = min(deadline, PostgresSocket.deadline(in: configuration.connectTimeout))
            do {
                try open(endpoint, deadline: hostDeadline)
                recordSessionOpened()
                return
            } catch {
                disconnect()
                switch error {
                case .authenticationFailed, .authenticationRefused, .configuration:
                    throw error
                case .deadlineExceeded:
                    reasons.append("\(endpoint): no answer within the connect timeout")
                default:
                    reasons.append("\(endpoint): \(error)")
                }
            }
        }
        throw .unavailable(reasons.joined(separator: "; "))
    }

    /// Opens one session: TCP, TLS when `sslmode` asks for it, StartupMessage, the login, then ReadyForQuery and the
    /// read-write check.
    private func open(_ endpoint: PostgresConfiguration.Endpoint, deadline: UInt64) throws(PostgresError) {
        self.endpoint = endpoint
        fd = try PostgresSocket.open(endpoint, deadline: deadline)
        if let tlsContext { tls = try Self.negotiateTLS(fd: fd, endpoint: endpoint, context: tlsContext, deadline: deadline) }
        var startup = PostgresFrontend()
        var settings: [(String, String)] = [
            ("user", configuration.user), ("database", configuration.database), ("client_encoding", "UTF8"),
        ]
        if let name = configuration.applicationName { settings.append(("application_name", name)) }
        startup.startup(parameters: settings)
        try sendAll(startup.bytes, deadline: deadline)
        try logIn(deadline: deadline)
        if configuration.targetSessionAttributes == .readWrite, try !isReadWrite(deadline: deadline) {
            throw .unavailable("\(endpoint) is read-only (a standby), and target_session_attrs=read-write")
        }
    }

    /// The authentication exchange up to ReadyForQuery (protocol.sgml, "Start-up").
    ///
    /// SCRAM-SHA-256 is the login this client offers; cleartext `password` is always refused and `md5` unless
    /// allowed. An AuthenticationOk before SCRAM's server signature was checked is refused: it would let a
    /// server that does not know the password's verifier pass as the real one.
    private func logIn(deadline: UInt64) throws(PostgresError) {
        var scram: SCRAMSHA256Client?
        var scramVerified = false
        while true {
            switch try readMessage(deadline: deadline) {
            case .authentication(.ok):
                if scram != nil && !scramVerified {
                    throw .authenticationRefused("the server accepted the login without proving it knows the password (no SCRAM final)")
                }
            case .authentication(.sasl(let mechanisms)):
                guard mechanisms.contains("SCRAM-SHA-256") else {
                    throw .authenticationRefused("the server offers SASL \(mechanisms.joined(separator: ", ")) but not SCRAM-SHA-256")
                }
                let client = SCRAMSHA256Client(user: "", password: try passwordBytes(), keys: scramKeys)
                scram = client
                var message = PostgresFrontend()
                message.saslInitialResponse(mechanism: "SCRAM-SHA-256", data: client.clientFirstMessage)
                try sendAll(message.bytes, deadline: deadline)
            case .authentication(.saslContinue(let serverFirst)):
                guard var client = scram else { throw .protocolError("SASLContinue without a SASL exchange") }
                let final = try client.clientFinalMessage(serverFirst: serverFirst)
                scram = client
                var message = PostgresFrontend()
                message.passwordMessage(final)
                try sendAll(message.bytes, deadline: deadline)
            case .authentication(.saslFinal(let serverFinal)):
                guard let client = scram else { throw .protocolError("SASLFinal without a SASL exchange") }
                try client.verify(serverFinal: serverFinal)
                scramVerified = true
            case .authentication(.cleartextPassword):
                throw .authenticationRefused(
                    "the server asks for the password in clear text; set scram-sha-256 for this client in pg_hba.conf")
            case .authentication(.md5Password(let salt)):
                guard configuration.allowMD5 else {
                    throw .authenticationRefused(
                        "the server asks for an md5 password login, which is refused unless allowed; set scram-sha-256 in pg_hba.conf and reset the password"
                    )
                }
                var message = PostgresFrontend()
                message.passwordMessage(Self.md5Response(password: try passwordBytes(), user: configuration.user, salt: salt))
                try sendAll(message.bytes, deadline: deadline)
            case .authentication(.unsupported(let code)):
                throw .authenticationRefused("the server asks for an authentication method this client does not speak (code \(code))")
            case .backendKeyData(let pid, let key):
                processID = pid
                secretKey = key
            case .error(let error):
                let mapped = PostgresError.from(error)
                if case .server = mapped {
                    // Such as 3D000 (no such database) or 53300 (too many connections): this host cannot serve now.
                    throw .unavailable("\(endpointText) refused the session: \(error)")
                }
                throw mapped
            case .readyForQuery:
                return
            case .parameterStatus, .notice, .negotiateProtocolVersion:
                continue
            case .rowDescription, .dataRow, .commandComplete, .emptyQueryResponse, .parseComplete, .bindComplete, .closeComplete, .noData,
                .portalSuspended, .notification, .parameterDescription:
                throw .protocolError("an unexpected message arrived during start-up")
            }
        }
    }

    /// The password's bytes, or a refusal when the server asks for one and none is configured.
    private func passwordBytes() throws(PostgresError) -> [UInt8] {
        guard let password = configuration.password else {
            throw .authenticationRefused("the server asks for a password and the configuration has none")
        }
        return Array(password.value.utf8)
    }

    /// PasswordMessage for AuthenticationMD5Password: `md5` + md5hex(md5hex(password + user) + salt), NUL-terminated.
    static func md5Response(password: [UInt8], user: String, salt: [UInt8]) -> [UInt8] {
        let inner = Array(Hex.encode(MD5.hash(password + Array(user.utf8))).utf8)
        return Array(("md5" + Hex.encode(MD5.hash(inner + salt))).utf8) + [0]
    }

    /// Whether the server takes writes: PostgreSQL 14 and later report `in_hot_standby` and
    /// `default_transaction_read_only` as ParameterStatus; older servers are asked `SHOW transaction_read_only`.
    private func isReadWrite(deadline: UInt64) throws(PostgresError) -> Bool {
        if let standby = parameters["in_hot_standby"] {
            return standby == "off" && parameters["default_transaction_read_only"] != "on"
        }
        var message = PostgresFrontend()
        message.query("SHOW transaction_read_only")
        try sendAll(message.bytes, deadline: deadline)
        let rows = try readResults(queries: [PostgresQuery("SHOW transaction_read_only")], newStatements: [:], deadline: deadline)
        return rows.first?.rows.first?.string(0) == "off"
    }
}
