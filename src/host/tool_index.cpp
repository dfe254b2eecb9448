#include <switchboard/host/tool_index.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace switchboard::host {

namespace {

// FNV-1a: stable across runs and platforms, so a shortened name never changes between sessions.
std::uint32_t fnv1a_32(std::string_view s, std::uint32_t h = 2166136261u) {
    for (unsigned char c : s) {
        h ^= c;
        h *= 16777619u;
    }
    return h;
}

std::string hash_suffix(std::string_view a, std::string_view b = {}) {
    auto h = fnv1a_32(b, fnv1a_32(std::string_view("\0", 1), fnv1a_32(a)));
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
    // tools_ is sorted by name: no map beside it (1,000 tools were 1,000 map nodes and name copies).
    auto it = std::lower_bound(tools_.begin(), tools_.end(), exposed_name,
                               [](const IndexedTool& t, std::string_view n) { return std::string_view(t.name) < n; });
    return it != tools_.end() && it->name == exposed_name ? &*it : nullptr;
}

std::optional<std::string> ToolIndex::exposed_name(std::string_view server, std::string_view tool) const {
    for (const auto& t : tools_)
        if (t.server == server && t.tool->name == tool) return t.name;
    return std::nullopt;
}

ToolIndex ToolIndex::build(const std::vector<ServerTools>& servers) {
    // Sorted vectors instead of maps and sets: building allocates the entries, their names and little else.
    struct Entry {
        std::string_view server;  // into `servers`
        const mcp::Tool* tool;
        std::size_t list;  // into `lists`
        std::size_t pos;   // order of listing: the first of a server's tools with the same name wins
        bool shared = false;
        std::string name;
    };
    std::vector<std::shared_ptr<const std::vector<mcp::Tool>>> lists;
    lists.reserve(servers.size());
    std::size_t total = 0;
    for (const auto& s : servers) {
        lists.push_back(s.shared ? s.shared : std::make_shared<const std::vector<mcp::Tool>>(s.tools));
        total += lists.back()->size();
    }
    std::vector<Entry> entries;
    entries.reserve(total);
    for (std::size_t i = 0; i < servers.size(); ++i) {
        const auto& s = servers[i];
        for (const auto& t : *lists[i])
            if (tool_allowed(t.name, s.allowed, s.excluded) && (!s.keep || s.keep(t.name)))
                entries.push_back({s.server, &t, i, entries.size(), false, {}});
    }
    // Sorted by (server, tool): the result depends on the set of tools, never on the order servers connected in.
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return std::tie(a.server, a.tool->name, a.pos) < std::tie(b.server, b.tool->name, b.pos);
    });
    // A server listing a name twice: the first wins.
    entries.erase(std::unique(entries.begin(), entries.end(),
                              [](const Entry& a, const Entry& b) {
                                  return a.server == b.server && a.tool->name == b.tool->name;
                              }),
                  entries.end());

    // Groups of equal `key`: each entry of a group of two or more gets `mark` called on it.
    std::vector<Entry*> order(entries.size());
    auto mark_groups = [&](auto key, auto mark) {
        for (std::size_t i = 0; i < entries.size(); ++i) order[i] = &entries[i];
        std::sort(order.begin(), order.end(), [&](const Entry* a, const Entry* b) { return key(*a) < key(*b); });
        for (std::size_t i = 0; i < order.size();) {
            std::size_t j = i + 1;
            while (j < order.size() && key(*order[j]) == key(*order[i])) ++j;
            if (j - i > 1)
                for (std::size_t k = i; k < j; ++k) mark(*order[k]);
            i = j;
        }
    };
    // A bare name several servers expose (each (server, name) is unique by now).
    mark_groups([](const Entry& e) { return std::string_view(e.tool->name); }, [](Entry& e) { e.shared = true; });

    for (auto& e : entries) {
        const std::string wanted = e.shared ? fmt::format("{}__{}", e.server, e.tool->name) : e.tool->name;
        e.name = safe_tool_name(wanted);
        if (e.shared && e.name.size() == max_tool_name_length && wanted.size() > max_tool_name_length) {
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
        // The groups are found first and renamed after: renaming changes the key the groups are sorted by.
        std::vector<Entry*> colliding;
        mark_groups([](const Entry& e) { return std::string_view(e.name); },
                    [&](Entry& e) { colliding.push_back(&e); });
        if (colliding.empty()) break;
        for (auto* e : colliding)
            e->name = with_suffix(e->name, hash_suffix(e->server, e->tool->name + std::string(round, '#')),
                                  max_tool_name_length);
    }

    ToolIndex index;
    index.tools_.reserve(entries.size());
    for (auto& e : entries) index.tools_.push_back({std::move(e.name), std::string(e.server), e.tool, lists[e.list]});
    std::sort(index.tools_.begin(), index.tools_.end(),
              [](const IndexedTool& a, const IndexedTool& b) { return a.name < b.name; });
    return index;
}

}  // namespace switchboard::host
