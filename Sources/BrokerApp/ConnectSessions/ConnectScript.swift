import BrokerHTTP

/// `/connect.js`: the browser side of connect sessions, served by the broker itself (no build step, no package).
///
/// `TokenBroker.connect({broker, sessionToken})` opens the session's hosted page in a popup and returns a Promise
/// of `{account, state}`, or rejects with `{error}`: the provider's code (`access_denied`…), `closed` when the person
/// closes the popup, `blocked` when the browser blocks it, `expired` when the session was used or ran out. It
/// listens only to messages from the broker's origin and from its own popup.
enum ConnectScript {
    static let source = """
        /* token-broker connect.js: TokenBroker.connect({ broker, sessionToken }) -> Promise<{ account, state }>.
           Rejects with { error }: "blocked", "closed", "expired", "access_denied" or another provider or broker code. */
        (function (global) {
          "use strict";
          var TYPE = "token-broker:connect";
          function failure(error, message, state) {
            var reason = { error: error };
            if (message) reason.message = message;
            if (state) reason.state = state;
            return reason;
          }
          function connect(options) {
            return new Promise(function (resolve, reject) {
              var broker;
              try { broker = new URL(String(options && options.broker)); } catch (e) {
                reject(failure("invalid_options", "broker must be the broker's URL")); return;
              }
              var token = options.sessionToken;
              if (typeof token !== "string" || token === "") {
                reject(failure("invalid_options", "sessionToken is required")); return;
              }
              var base = broker.href.replace(/[?#].*$/, "").replace(/\\/+$/, "");
              var url = base + "/connect?session=" + encodeURIComponent(token) +
                "&opener_origin=" + encodeURIComponent(global.location.origin);
              var width = 520, height = 720;
              var left = Math.max(0, (global.screenX || 0) + ((global.outerWidth || width) - width) / 2);
              var top = Math.max(0, (global.screenY || 0) + ((global.outerHeight || height) - height) / 2);
              var popup = global.open(url, "token-broker-connect",
                "popup=yes,width=" + width + ",height=" + height + ",left=" + Math.round(left) + ",top=" + Math.round(top));
              if (!popup) { reject(failure("blocked", "The browser blocked the popup; call connect from a click.")); return; }
              var settled = false, timer = null;
              function settle(done, value) {
                if (settled) return;
                settled = true;
                global.removeEventListener("message", onMessage);
                if (timer !== null) global.clearInterval(timer);
                done(value);
              }
              function onMessage(event) {
                if (event.origin !== broker.origin || event.source !== popup) return;
                var data = event.data;
                if (!data || data.type !== TYPE) return;
                if (data.status === "connected" && typeof data.account === "string") {
                  settle(resolve, { account: data.account, state: data.state });
                } else {
                  settle(reject, failure(typeof data.error === "string" ? data.error : "failed", null, data.state));
                }
              }
              global.addEventListener("message", onMessage);
              // The end page posts before it closes; a moment's grace lets that message arrive first.
              timer = global.setInterval(function () {
                if (popup.closed) {
                  global.clearInterval(timer);
                  timer = null;
                  global.setTimeout(function () { settle(reject, failure("closed", "The window was closed.")); }, 400);
                }
              }, 250);
            });
          }
          global.TokenBroker = { connect: connect };
        })(window);

        """

    /// The script as served: JavaScript, cacheable for a few minutes, loadable from any origin.
    static let response = Response(
        status: .ok,
        headers: HTTPHeaders([
            ("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "public, max-age=300"),
            ("X-Content-Type-Options", "nosniff"), ("Cross-Origin-Resource-Policy", "cross-origin"),
        ]), body: Array(source.utf8))
}
