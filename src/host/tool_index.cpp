#include <switchboard/host/tool_index.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>

namespace switchboard::host {

namespace {

// FNV-1a: stable across runs and platforms, so a shortened name never changes between sessions.
std::uint32_t fnv1a(std::string_view s, std::uint32_t h = 2166136261u) {
    for (unsigned char c : s) {
        h ^= c;
        h *= 16777619u;
    }
    return h;
}

std::string hash_suffix(std::string_view a, std::string_view b = {}) {
    auto h = fnv1a(b, fnv1a(std::string_view("\0", 1), fnv1a(a)));
    return fmt::format("{:08x}", h);
}

bool safe_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// `base` shortened so that "_" + suffix fits in max_len.
std::string with_suffix(std::string_view base, std::string_view suffix, std::size_t max_len) {
    const std::size_t keep = max_len > suffix.size() + 1 ? max_len - suffix.size() - 1 : 0;
    return std::string(base.substr(0, std::min(base.size(), keep))) + "_" + std::string(suffix);
}

}  // namespace

bool is_safe_tool_name(std::string_view name) {
    return !name.empty() && name.size() <= max_tool_name_length && std::all_of(name.begin(), name.end(), safe_char);
}

std::string safe_tool_name(std::string_view name, std::size_t max_len) {
    std::string out;
    out.reserve(name.size());
    for (char c : name) out.push_back(safe_char(c) ? c : '_');
    if (out.empty()) return "tool_" + hash_suffix(name);
    // Too long: cut, with a hash of the original so that two long names sharing a prefix stay apart. (Collisions
    // among plain replacements, "a.b" vs "a_b", are resolved by the index.)
    if (out.size() > max_len) return with_suffix(out, hash_suffix(name), max_len);
    return out;
}

bool tool_allowed(std::string_view name, const std::vector<std::string>& allowed,
                  const std::vector<std::string>& excluded) {
    if (std::find(excluded.begin(), excluded.end(), name) != excluded.end()) return false;
    return allowed.empty() || std::find(allowed.begin(), allowed.end(), name) != allowed.end();
}

const IndexedTool* ToolIndex::find(std::string_view exposed_name) const {
    auto it = by_name_.find(exposed_name);
    return it == by_name_.end() ? nullptr : &tools_[it->second];
}

std::optional<std::string> ToolIndex::exposed_name(std::string_view server, std::string_view tool) const {
    for (const auto& t : tools_)
        if (t.server == server && t.tool->name == tool) return t.name;
    return std::nullopt;
}

ToolIndex ToolIndex::build(const std::vector<ServerTools>& servers) {
    struct Entry {
        std::string server;
        const mcp::Tool* tool;
        std::string name;
        std::shared_ptr<const std::vector<mcp::Tool>> list;
    };
    // Sorted by (server, tool): the result depends on the set of tools, never on the order servers connected in.
    std::vector<Entry> entries;
    std::map<std::string, std::set<std::string>> servers_of;  // bare name -> servers exposing it
    for (const auto& s : servers) {
        auto list = s.shared ? s.shared : std::make_shared<const std::vector<mcp::Tool>>(s.tools);
        std::set<std::string> seen;  // a server listing a name twice: the first wins
        for (const auto& t : *list) {
            if (!tool_allowed(t.name, s.allowed, s.excluded) || (s.keep && !s.keep(t.name)) ||
                !seen.insert(t.name).second)
                continue;
            entries.push_back({s.server, &t, {}, list});
            servers_of[t.name].insert(s.server);
        }
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return std::tie(a.server, a.tool->name) < std::tie(b.server, b.tool->name);
    });

    for (auto& e : entries) {
        const bool shared = servers_of[e.tool->name].size() > 1;
        const std::string wanted = shared ? e.server + "__" + e.tool->name : e.tool->name;
        e.name = safe_tool_name(wanted);
        if (shared && e.name.size() == max_tool_name_length && wanted.size() > max_tool_name_length) {
            // Keep the tool's own name visible: shorten the server part first.
            auto tool_part = safe_tool_name(e.tool->name, 40);
            auto server_part = safe_tool_name(e.server, 64);
            e.name =
                with_suffix(server_part.substr(0, std::min<std::size_t>(server_part.size(), 13)) + "__" + tool_part,
                            hash_suffix(e.server, e.tool->name), max_tool_name_length);
        }
    }

    // Names that collide after sanitizing or shortening: every colliding entry gets a hash of (server, tool), so no
    // entry is favoured and the result stays order-independent. Repeat in case a suffixed name hits another.
    for (int round = 0; round < 4; ++round) {
        std::map<std::string, int> count;
        for (const auto& e : entries) ++count[e.name];
        bool changed = false;
        for (auto& e : entries) {
            if (count[e.name] < 2) continue;
            e.name = with_suffix(e.name, hash_suffix(e.server, e.tool->name + std::string(round, '#')),
                                 max_tool_name_length);
            changed = true;
        }
        if (!changed) break;
    }

    ToolIndex index;
    index.tools_.reserve(entries.size());
    for (auto& e : entries) index.tools_.push_back({std::move(e.name), e.server, e.tool, std::move(e.list)});
    std::sort(index.tools_.begin(), index.tools_.end(),
              [](const IndexedTool& a, const IndexedTool& b) { return a.name < b.name; });
    for (std::size_t i = 0; i < index.tools_.size(); ++i) index.by_name_.emplace(index.tools_[i].name, i);
    return index;
}

}  // namespace switchboard::host
