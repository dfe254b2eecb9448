#include <switchboard/agent/approvals.hpp>

#include <switchboard/core/text.hpp>

#include <fmt/format.h>

namespace switchboard::agent {

bool Approvals::allows(std::string_view exposed_name, std::string_view server, std::string_view tool) const {
    if (all) return true;
    if (tools.count(std::string(exposed_name)) || servers.count(std::string(server))) return true;
    const auto qualified = fmt::format("{}__{}", server, tool);
    if (tools.count(qualified)) return true;  // remembered by a fork (or named so by the user)
    for (const auto& p : patterns)
        if (core::glob_match(p, exposed_name) || core::glob_match(p, qualified)) return true;
    return false;
}

void Approvals::remember(Decision d, std::string_view name, std::string_view server) {
    if (d == Decision::always_tool) tools.insert(std::string(name));
    if (d == Decision::always_server) servers.insert(std::string(server));
}

}  // namespace switchboard::agent
