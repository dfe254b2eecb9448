// What the config parsers share (config.cpp: the document; config_entry.cpp: one server entry; config_expand.cpp:
// `${VAR}` expansion): the state of an expansion, and the check of key names with its "did you mean". Private to host.
#pragma once

#include <switchboard/host/config.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::host::detail {

// Defaults nest (`${A:-${B:-x}}`); deeper than this is no real config, and each level rescans the text.
inline constexpr int max_expansion_depth = 16;

struct Expansion {
    std::vector<std::string> missing;  ///< unset names without default
    std::vector<std::string> inputs;   ///< VS Code `${input:x}` references, left as written
    int depth = 0;
    bool too_deep = false;  ///< a default nested deeper than max_expansion_depth (expanded as "")
};

/// Appends `text` to `out` with each `${...}` it understands expanded (config_expand.cpp); what it cannot expand is
/// noted in `ex`.
void expand_into(std::string_view text, const EnvLookup& env, Expansion& ex, std::string& out);

template <std::size_t N>
bool contains(const std::string_view (&keys)[N], std::string_view key) {
    return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

// Optimal string alignment distance: a swapped pair of letters ("comamnd") counts as one typo.
std::size_t edit_distance(std::string_view a, std::string_view b);

// " (did you mean "x"?)" or "". A distance as long as the key itself is no resemblance ("id" vs "cwd").
template <std::size_t N>
std::string suggestion(std::string_view key, const std::string_view (&candidates)[N]) {
    std::string_view best;
    std::size_t best_distance = 3;
    for (const auto candidate : candidates) {
        const auto distance = edit_distance(key, candidate);
        if (distance < best_distance && distance < key.size()) {
            best = candidate;
            best_distance = distance;
        }
    }
    return best.empty() ? std::string() : fmt::format(" (did you mean \"{}\"?)", best);
}

}  // namespace switchboard::host::detail
