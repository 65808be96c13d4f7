import BrokerRedis
import Testing

@testable import BrokerApp

/// The Redis client's and cache's figures in the Prometheus text format.
struct RedisMetricsRenderingTests {
    @Test func bucketsAreCumulativeAndEveryFigureHasItsHelpAndType() {
        var snapshot = RedisMetrics().snapshot()
        snapshot.roundTripCounts[0] = 3
        snapshot.roundTripCounts[2] = 2
        snapshot.roundTripCounts[RedisMetrics.roundTripBounds.count] = 1
        snapshot.roundTripSeconds = 2.5
        snapshot.cacheHits = 7
        snapshot.trackingUp = true
        let text = snapshot.prometheusText
        #expect(text.contains("broker_redis_round_trip_seconds_bucket{le=\"0.0001\"} 3\n"))
        #expect(text.contains("broker_redis_round_trip_seconds_bucket{le=\"0.0005\"} 5\n"))
        #expect(text.contains("broker_redis_round_trip_seconds_bucket{le=\"+Inf\"} 6\n"))
        #expect(text.contains("broker_redis_round_trip_seconds_count 6\n"))
        #expect(text.contains("broker_redis_round_trip_seconds_sum 2.5\n"))
        #expect(text.contains("broker_redis_cache_hits_total 7\n"))
        #expect(text.contains("broker_redis_tracking_up 1\n"))
        let samples = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            String($0.split(separator: " ")[0].split(separator: "{")[0])
        }
        for name in Set(samples) {
            let family = name.replacingOccurrences(of: "_bucket", with: "").replacingOccurrences(of: "_sum", with: "")
                .replacingOccurrences(of: "_count", with: "")
            #expect(text.contains("# HELP \(family) ") && text.contains("# TYPE \(family) "), "\(name)")
        }
    }
}
