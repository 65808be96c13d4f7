import BrokerFakeProviders
import BrokerTestSupport

extension FakeOAuth2Provider {
    /// A provider started on 127.0.0.1:0 for the current ``TestScope`` and stopped when the test ends.
    static func scoped(_ configuration: Configuration, behaviour: Behaviour? = nil) throws -> FakeOAuth2Provider {
        let provider = try started(configuration, behaviour: behaviour)
        TestScope.required("a fake provider")?.onEnd { await provider.stop() }
        return provider
    }
}

extension FakeTwitterProvider {
    /// A fake Twitter started for the current ``TestScope`` and stopped when the test ends.
    static func scoped(consumerSecret: String) throws -> FakeTwitterProvider {
        let fake = try started(consumerSecret: consumerSecret)
        TestScope.required("a fake provider")?.onEnd { await fake.stop() }
        return fake
    }
}

extension FakeTMDBProvider {
    /// A fake TMDB started for the current ``TestScope`` and stopped when the test ends.
    static func scoped(apiKey: String) throws -> FakeTMDBProvider {
        let fake = try started(apiKey: apiKey)
        TestScope.required("a fake provider")?.onEnd { await fake.stop() }
        return fake
    }
}

extension FakeCredentialProvider {
    /// A fake credential API started for the current ``TestScope`` and stopped when the test ends.
    static func scoped(apiKey: String, token: String, username: String, password: String) throws -> FakeCredentialProvider {
        let fake = FakeCredentialProvider(apiKey: apiKey, token: token, username: username, password: password)
        try fake.start()
        TestScope.required("a fake provider")?.onEnd { await fake.stop() }
        return fake
    }
}
