#if FUZZING
import Foundation
@testable import BrokerCore

/// The seed corpus of FuzzDecoders, written by the real encoders so that every seed starts out valid or nearly so.
enum DecoderSeeds {
    /// Writes every seed into `directory` (created if missing); returns 0, or 1 when a file cannot be written.
    static func write(to directory: String) -> Int32 {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let seeds = try all()
            for (index, seed) in seeds.enumerated() {
                let name = "\(directory)/\(String(describing: seed.kind))-\(index)"
                try Data(DecoderInput.encode(seed.kind, parameter: seed.parameter, seed.payload)).write(to: URL(fileURLWithPath: name))
            }
            print("FuzzDecoders: \(seeds.count) seeds in \(directory)")
            return 0
        } catch {
            FileHandle.standardError.write(Data("FuzzDecoders --seeds: \(error)\n".utf8))
            return 1
        }
    }

    /// One seed: the decoder, the parameter byte and the payload.
    typealias Seed = (kind: DecoderInput.Kind, parameter: UInt8, payload: [UInt8])

    /// Every seed.
    static func all() throws -> [Seed] {
        var seeds: [Seed] = []
        func add(_ kind: DecoderInput.Kind, _ parameter: UInt8, _ text: String) {
            seeds.append((kind, parameter, Array(text.utf8)))
        }
        for text in providersFiles { add(.providersFile, 0, text) }
        for account in accounts {
            seeds.append((.plainAccount, 0, try PlainJSONAccountCodec().encode(account)))
            seeds.append((.encryptedAccount, 0, try DecoderFixtures.encryptedCodec.encode(account)))
            seeds.append((.encryptedAccount, 1, try PlainJSONAccountCodec().encode(account)))
        }
        for flow in flows { seeds.append((.pendingFlow, 0, try PendingFlowCodec.encode(flow))) }
        // Parameter p: status index p % 9, Content-Type index (p / 9) % 7 (see DecoderFuzzCase.response).
        for (parameter, body) in oauth2Bodies { add(.oauth2Response, parameter, body) }
        for (parameter, body) in oauth1Bodies { add(.oauth1Response, parameter, body) }
        for (parameter, body) in tmdbBodies { add(.tmdbResponse, parameter, body) }
        for (parameter, stream) in respStreams { add(.resp, parameter, stream) }
        for setting in [DecoderFixtures.keySetting, "k1:" + DecoderFixtures.keySetting.dropFirst(3).prefix(44), " , ", "bad id:AAAA"] {
            add(.keyring, 0, setting)
        }
        return seeds
    }

    /// The token sentinel the seeds carry, which no error may repeat.
    static let secret = DecoderFixtures.responseSecret

    /// Providers files: preset overrides, custom providers of each kind, `${NAME}` references, mistakes.
    static let providersFiles = [
        #"{"providers":{"github":{"scopes":["read:user"],"pkce":true}}}"#,
        #"{"providers":{"acme":{"kind":"oauth2","client_id":"${CUSTOM_CLIENT_ID}","client_secret":"${CUSTOM_SECRET}","#
            + #""authorize_url":"https://acme.example/authorize","token_url":"https://acme.example/token","#
            + #""user_url":"https://acme.example/me","user_id_field":"id","scopes":["a","b"],"scope_separator":" ","#
            + #""authorize_params":{"prompt":"consent"},"token_endpoint_auth_method":"client_secret_basic","#
            + #""revoke_url":"https://acme.example/revoke","revoke_token_param":"token"}}}"#,
        #"{"providers":{"tw2":{"kind":"oauth1","client_id":"k","client_secret":"${CUSTOM_SECRET}","#
            + #""request_token_url":"https://api.example/oauth/request_token","authorize_url":"https://api.example/oauth/authorize","#
            + #""access_token_url":"https://api.example/oauth/access_token","user_url":"https://api.example/verify"}}}"#,
        #"{"providers":{"movies":{"kind":"tmdb","api_key":"${CUSTOM_SECRET}","api_base_url":"https://api.example/3","#
            + #""authenticate_url":"https://www.example/authenticate"}}}"#,
        #"{"providers":{"weibo":{"client_secret":"${EMPTY}"}}}"#,
        #"{"providers":{"x":{"kind":"oauth3"}},"extra":1}"#,
        #"{"providers":{"Bad Name":{}}}"#,
        #"{"providers":{"acme":{"kind":"oauth2","authorize_url":"ftp://x#frag","authorize_params":{"state":"x"}}}}"#,
        "[1,2,3]", "", "{\"providers\":", "{\"providers\":{\"a\":[{\"b\":{\"c\":[1e999,-0.0,\"\\ud800\"]}}]}}",
    ]

    /// Accounts with few and with all fields.
    static let accounts: [Account] = {
        let t = Date(timeIntervalSince1970: 1_767_225_600.25)
        return [
            Account(provider: "github", uid: "42", accessToken: Secret(secret), createdAt: t, updatedAt: t),
            Account(
                provider: "weibo", uid: "5820", accessToken: Secret("2.00abc" + secret), tokenType: "bearer",
                scope: "all email", refreshToken: Secret("r-" + secret), screenName: "名字 \"q\"",
                expiresAt: t.addingTimeInterval(3600), createdAt: t, updatedAt: t.addingTimeInterval(5),
                refreshedAt: t.addingTimeInterval(5), status: .reauthorizationRequired),
            Account(
                provider: "twitter", uid: "783214", accessToken: Secret("783214-abc"), tokenSecret: Secret(secret),
                screenName: "twitter", createdAt: t, updatedAt: t),
        ]
    }()

    /// Pending flows of each kind.
    static let flows: [PendingFlow] = {
        let t = Date(timeIntervalSince1970: 1_767_225_600)
        return [
            PendingFlow(
                state: "af0ifjsldkj", provider: "github", binding: "b1",
                codeVerifier: Secret("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
                returnTo: "/done?x=1", createdAt: t, expiresAt: t.addingTimeInterval(600)),
            PendingFlow(
                state: "s2", provider: "twitter", binding: "b2", requestToken: "Z6eEdO8MOmk394WozF5oKyuAv855l4Mlqo7hhlSLik",
                requestTokenSecret: Secret(secret), createdAt: t, expiresAt: t.addingTimeInterval(600)),
        ]
    }()

    /// OAuth 2.0 token, user and error bodies (RFC 6749 §5.1–5.2, Weibo, GitHub).
    static let oauth2Bodies: [(UInt8, String)] = [
        (0, #"{"access_token":"\#(secret)","token_type":"bearer","expires_in":3600,"refresh_token":"r","scope":"a b","uid":"5820"}"#),
        (0, #"{"access_token":"\#(secret)","expires_in":"3600","remind_in":"157679999","uid":1234567890123}"#),
        (18, "access_token=\(secret)&scope=repo%2Cgist&token_type=bearer"),
        (0, #"{"error":"bad_verification_code","error_description":"\#(secret)","error_uri":"https://x"}"#),
        (4, #"{"error":"invalid_grant","error_code":21325,"error_description":"invalid authorization code:\#(secret)"}"#),
        (0, #"{"error_code":"20502","error":"\#(secret)"}"#),
        (27, "<html><body>\(secret)</body></html>"),
        (0, #"{"access_token":null,"expires_in":1.5}"#),
        (0, #"{"result":"false"}"#),
        (0, " \n\t"),
    ]

    /// OAuth 1.0a answers and Twitter's error bodies.
    static let oauth1Bodies: [(UInt8, String)] = [
        (27, "oauth_token=Z6eEdO8MOmk394WozF5oKyuAv855l4Mlqo7hhlSLik&oauth_token_secret=\(secret)&oauth_callback_confirmed=true"),
        (27, "oauth_token=7588892-kagSNqWge8gB1WwE3plnFsJHAZVfxWD7Vb57p0b4&oauth_token_secret=\(secret)&user_id=7588892&screen_name=x"),
        (0, #"{"id_str":"783214","screen_name":"twitter","name":"\#(secret)"}"#),
        (5, #"{"errors":[{"code":32,"message":"Could not authenticate you: \#(secret)"}]}"#),
        (4, #"<?xml version="1.0"?><errors><error code="415">Callback \#(secret) not approved</error></errors>"#),
        (5, "oauth_problem=token_rejected&oauth_problem_advice=\(secret)"),
        (5, "Failed to validate oauth signature and token \(secret)"),
    ]

    /// TMDB answers: request token, session, account, failures.
    static let tmdbBodies: [(UInt8, String)] = [
        (0, #"{"success":true,"expires_at":"2026-01-01 00:00:00 UTC","request_token":"\#(secret)"}"#),
        (0, #"{"success":true,"session_id":"\#(secret)"}"#),
        (0, #"{"id":548,"username":"x","name":""}"#),
        (5, #"{"status_code":33,"status_message":"Invalid request token: \#(secret)","success":false}"#),
        (0, #"{"failure":true,"status_code":7,"status_message":"\#(secret)"}"#),
        (0, #"{"success":1}"#),
    ]

    /// RESP2 streams: every type, nil forms, nesting, pipelined replies.
    static let respStreams: [(UInt8, String)] = [
        (128, "+OK\r\n"), (3, "-ERR unknown command\r\n"), (9, ":-42\r\n"), (60, "$5\r\nhello\r\n"), (0, "$-1\r\n*-1\r\n"),
        (77, "*3\r\n$3\r\nfoo\r\n:1\r\n*2\r\n+a\r\n$0\r\n\r\n"), (200, "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n"),
        (31, "+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n$2\r\nok\r\n"), (5, "$10\r\nshort\r\n"),
    ]
}
#endif
