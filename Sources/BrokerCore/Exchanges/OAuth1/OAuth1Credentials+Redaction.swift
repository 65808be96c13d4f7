extension OAuth1Credentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A summary that names the consumer key and hides the secrets and the token.
    public var description: String {
        let token = token == nil ? "nil" : "<redacted>"
        let tokenSecret = tokenSecret == nil ? "nil" : "<redacted>"
        return "OAuth1Credentials(consumerKey: \(consumerKey), consumerSecret: <redacted>, token: \(token), tokenSecret: \(tokenSecret))"
    }

    /// The same redacted summary as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the secrets and the token replaced, so `dump` cannot reveal them.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "consumerKey": consumerKey,
                "consumerSecret": "<redacted>",
                "token": token == nil ? "nil" : "<redacted>",
                "tokenSecret": tokenSecret == nil ? "nil" : "<redacted>",
            ])
    }
}
