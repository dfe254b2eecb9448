#include <switchboard/core/backoff.hpp>

#include <algorithm>
#include <random>

namespace switchboard::core {

std::chrono::milliseconds backoff_delay(const BackoffPolicy& policy, int attempt, double unit_random) {
    const auto cap = std::max<long long>(policy.max.count(), 0);
    long long d = std::max<long long>(policy.base.count(), 0);
    // Double without overflowing: stop once the cap is reached.
    for (int i = 0; i < attempt && d < cap; ++i) d *= 2;
    d = std::min(d, cap);
    if (!policy.jitter) return std::chrono::milliseconds(d);
    unit_random = std::clamp(unit_random, 0.0, 1.0);
    const long long half = d / 2;
    return std::chrono::milliseconds(d - half + static_cast<long long>(static_cast<double>(half) * unit_random));
}

std::chrono::milliseconds backoff_delay(const BackoffPolicy& policy, int attempt) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    return backoff_delay(policy, attempt, std::uniform_real_distribution<double>(0.0, 1.0)(rng));
}

}  // namespace switchboard::core
