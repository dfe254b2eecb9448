// The clock as OAuth and JWTs count it: whole seconds since the Unix epoch. Private to auth.
#pragma once

#include <chrono>
#include <cstdint>

namespace switchboard::auth::detail {

inline std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace switchboard::auth::detail
