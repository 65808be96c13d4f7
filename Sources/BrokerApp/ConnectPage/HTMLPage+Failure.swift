import BrokerCore

extension HTMLPage {
    /// What the person was doing when it failed, for the headline.
    enum Attempt {
        /// Connecting an account (`/authorize`, `/callback`).
        case connect
        /// Disconnecting an account (`POST /disconnect`).
        case disconnect
        /// Opening the connect page.
        case view
    }

    /// The page a browser gets instead of the API's JSON error: what happened in plain words and a way back to the connect page.
    ///
    /// Only the error's own sentences appear, which never hold a token, code or provider body.
    static func failure(_ error: BrokerError, during attempt: Attempt, appearance: PageAppearance) -> HTMLPage {
        let headline =
            switch attempt {
            case .connect: "The account was not connected"
            case .disconnect: "The account was not disconnected"
            case .view: "The page could not be shown"
            }
        let body = """
            <h1>\(escape(headline))</h1>
            <p class="notice error" role="alert">\(escape(explanation(error)))</p>
            <p>\(escape(advice(error)))</p>
            <p>\(backLink(appearance))</p>
            <p class="fine">Error code: <code>\(escape(error.code))</code></p>
            """
        return HTMLPage(title: headline + " · " + appearance.title, body: body, appearance: appearance)
    }

    /// `Back to TITLE`: a button to the connect page, under the public path.
    static func backLink(_ appearance: PageAppearance) -> String {
        "<a class=\"button\" href=\"\(escape(appearance.home))\">Back to \(escape(appearance.title))</a>"
    }

    /// What happened, in the words of someone who just clicked a button.
    static func explanation(_ error: BrokerError) -> String {
        switch error {
        case .accessDenied:
            "The sign-in was cancelled or refused at the provider, so no account was connected."
        case .invalidState:
            "This sign-in could not be matched to one started in this browser: it took too long, "
                + "was already finished, or was started in another browser or at another address."
        case .unknownProvider, .providerNotConfigured, .providerUnavailable, .invalidReturnTo, .upstreamError, .upstreamTimeout, .notFound,
            .expired, .reauthorizationRequired, .refreshExhausted, .notRefreshable, .unauthorized, .badRequest, .storageUnavailable,
            .recordDamaged, .ambiguousAccount, .credentialNotForwardable, .connectSessionGone, .reconnectMismatch, .insufficientPermissions,
            .insufficientScope, .credentialInvalid, .invalidSetting, .accountInvalid:
            error.message
        }
    }

    /// What to do next.
    static func advice(_ error: BrokerError) -> String {
        switch error {
        case .accessDenied, .invalidState, .expired, .reauthorizationRequired, .refreshExhausted, .notRefreshable:
            "Go back and choose Connect again."
        case .upstreamError, .upstreamTimeout, .storageUnavailable, .providerUnavailable:
            "Nothing was changed. Try again in a moment; if it keeps failing, the broker's log says more."
        case .providerNotConfigured, .unknownProvider:
            "Whoever runs this broker can fix this; the page lists the settings each provider needs."
        case .invalidReturnTo, .notFound, .unauthorized, .badRequest, .ambiguousAccount, .credentialNotForwardable,
            .insufficientPermissions, .credentialInvalid, .invalidSetting, .accountInvalid:
            "Go back to the page and start from there."
        case .connectSessionGone, .reconnectMismatch, .insufficientScope:
            "Close this window and start again from the app."
        case .recordDamaged:
            "Trying again will not help: tell whoever runs this broker, whose log names the damaged record."
        }
    }
}
