#include <switchboard/llm/client.hpp>

#include <switchboard/core/backoff.hpp>

#include <algorithm>
#include <charconv>
#include <ctime>

namespace switchboard::llm {

using std::chrono::milliseconds;

bool retryable_status(unsigned status) {
    // 408 and 429 are "try later"; 5xx is the server's trouble, except "not implemented" and "version not supported",
    // which a retry cannot change.
    return status == 408 || status == 429 || (status >= 500 && status <= 599 && status != 501 && status != 505);
}

std::optional<milliseconds> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    if (value.empty()) return std::nullopt;
    std::int64_t seconds = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec == std::errc() && end == value.data() + value.size())
        return seconds < 0 ? std::nullopt : std::optional(milliseconds(std::min<std::int64_t>(seconds, 86400) * 1000));
    // An HTTP date (IMF-fixdate): "Wed, 21 Oct 2015 07:28:00 GMT".
    std::tm tm{};
    const std::string text(value);
    const char* rest = ::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!rest || *rest != '\0') return std::nullopt;
    const auto when = std::chrono::system_clock::from_time_t(::timegm(&tm));
    return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(when - now));
}

milliseconds retry_delay(int attempt, std::optional<milliseconds> retry_after, milliseconds max) {
    if (retry_after) return std::min(*retry_after, max);
    core::BackoffPolicy policy;
    policy.base = milliseconds(500);
    policy.max = max;
    return std::min(core::backoff_delay(policy, attempt), max);
}

}  // namespace switchboard::llm
