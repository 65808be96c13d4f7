import BrokerCore
import Foundation
import Testing

@testable import BrokerURLSession

/// Cancelling a caller while its answer arrives: the cancellation handler and the delegate's completion must not wait for each other.
struct SessionOwnerCancellationTests {
    // A bound on a hang, not a speed target: a run beside another test suite took 70 s.
    @Test(.timeLimit(.minutes(5)))
    func callersCancelledAsTheirAnswersArriveAllReturn() async throws {
        let server = try LocalHTTPServer { _ in "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok" }
        defer { server.stop() }
        let client = URLSessionUpstreamClient(timeout: 30)
        for round in 0..<60 {
            let calls = (0..<16).map { index in
                Task { _ = try? await client.send(UpstreamRequest(method: "GET", url: server.url("/\(round)/\(index)"))) }
            }
            // Cancel at staggered moments, so some land while URLSession is completing the call.
            for (index, call) in calls.enumerated() {
                if index % 4 == 0 { try await Task.sleep(for: .milliseconds(1)) }
                call.cancel()
            }
            for call in calls { await call.value }
        }
    }
}
