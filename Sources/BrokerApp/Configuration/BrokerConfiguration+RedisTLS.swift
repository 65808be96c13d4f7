import BrokerRedis
import BrokerTLS

extension BrokerConfiguration {
    /// `BROKER_STORE` given as `rediss://`, with its TLS settings: `BROKER_REDIS_TLS_CA_FILE` (a private CA, added to
    /// the system's store) and `BROKER_REDIS_TLS_CERT_FILE` with `BROKER_REDIS_TLS_KEY_FILE` (a client certificate).
    ///
    /// The files are loaded now, so a missing or unreadable one stops start-up naming its variable rather than
    /// leaving the broker unready; they are refused with any other store, where nothing would use them.
    static func redisTLS(for location: RedisLocation?, _ read: EnvironmentReader) throws(ConfigurationError) -> RedisLocation? {
        let caFile = read.raw("BROKER_REDIS_TLS_CA_FILE")
        let certificateFile = read.raw("BROKER_REDIS_TLS_CERT_FILE")
        let keyFile = read.raw("BROKER_REDIS_TLS_KEY_FILE")
        guard let location, location.usesTLS else {
            let given = [
                ("BROKER_REDIS_TLS_CA_FILE", caFile), ("BROKER_REDIS_TLS_CERT_FILE", certificateFile),
                ("BROKER_REDIS_TLS_KEY_FILE", keyFile),
            ]
            if let name = given.first(where: { $0.1 != nil })?.0 {
                throw ConfigurationError(variable: name, message: "is only used with BROKER_STORE=rediss://…; remove it or use rediss://")
            }
            return location
        }
        var tls = RedisTLS(caFile: caFile)
        switch (certificateFile, keyFile) {
        case (nil, nil): break
        case (let certificate?, let key?): tls.clientCertificate = TLSContext.ClientCertificate(certificateFile: certificate, keyFile: key)
        case (nil, _?):
            throw ConfigurationError(variable: "BROKER_REDIS_TLS_CERT_FILE", message: "must be set with BROKER_REDIS_TLS_KEY_FILE")
        case (_?, nil):
            throw ConfigurationError(variable: "BROKER_REDIS_TLS_KEY_FILE", message: "must be set with BROKER_REDIS_TLS_CERT_FILE")
        }
        do throws(TLSError) {
            _ = try tls.context()
        } catch {
            let variable = if case .caFile = error { "BROKER_REDIS_TLS_CA_FILE" } else { "BROKER_REDIS_TLS_CERT_FILE" }
            throw ConfigurationError(variable: variable, message: "cannot be used: \(error.reason)")
        }
        return location.configuringTLS(tls)
    }
}
