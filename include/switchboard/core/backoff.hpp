// Reconnect backoff: delay(attempt) = min(max, base * 2^attempt), with "equal jitter" (half fixed, half random) so
// that many servers lost at once do not retry in lockstep. The base is configurable so tests run in milliseconds.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <chrono>

namespace switchboard::core {

struct BackoffPolicy {
    std::chrono::milliseconds base{1000};
    std::chrono::milliseconds max{30'000};
    bool jitter = true;
    /// A connection that stayed up this long resets the attempt count; shorter ones count towards the limit, so a
    /// crash loop (connects, dies, connects, dies) stops after maxReconnectAttempts.
    std::chrono::milliseconds stable_after{30'000};
};

/// The delay before reconnect attempt `attempt` (0-based). `unit_random` in [0, 1) picks the jitter.
std::chrono::milliseconds backoff_delay(const BackoffPolicy& policy, int attempt, double unit_random);

/// Same, with a random jitter.
std::chrono::milliseconds backoff_delay(const BackoffPolicy& policy, int attempt);

}  // namespace switchboard::core
