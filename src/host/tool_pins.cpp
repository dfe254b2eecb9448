#include <switchboard/host/tool_pins.hpp>

#include <switchboard/core/atomic_file.hpp>
#include <switchboard/core/canonical_json.hpp>
#include <switchboard/mcp/skills.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/json/parse.hpp>

#include <fstream>
#include <set>
#include <sstream>

namespace switchboard::host {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr int lockfile_version = 1;

std::string_view plural(PinKind kind) {
    switch (kind) {
    case PinKind::tool: return "tools";
    case PinKind::prompt: return "prompts";
    case PinKind::resource_template: return "resourceTemplates";
    }
    return "tools";
}

// The members of `from` named in `keys`, as they are.
json::object pick(const json::object& from, std::initializer_list<std::string_view> keys) {
    json::object out;
    for (auto key : keys)
        if (const auto* v = from.if_contains(key)) out[key] = *v;
    return out;
}

Pin pin(json::object definition) {
    auto digest = definition_digest(definition);
    return Pin{std::move(digest), std::move(definition)};
}

// The members of two definitions whose values differ, by name ("description", "inputSchema", ...).
std::vector<std::string> changed_fields(const json::object& before, const json::object& now) {
    std::set<std::string> names;
    for (const auto& kv : before) names.insert(kv.key());
    for (const auto& kv : now) names.insert(kv.key());
    std::vector<std::string> out;
    for (const auto& name : names) {
        const auto* a = before.if_contains(name);
        const auto* b = now.if_contains(name);
        if (!a || !b || core::canonical_json(*a) != core::canonical_json(*b)) out.push_back(name);
    }
    return out;
}

}  // namespace

std::string_view to_string(PinKind kind) {
    switch (kind) {
    case PinKind::tool: return "tool";
    case PinKind::prompt: return "prompt";
    case PinKind::resource_template: return "resourceTemplate";
    }
    return "tool";
}

std::optional<PinKind> pin_kind_named(std::string_view name) {
    for (auto kind : {PinKind::tool, PinKind::prompt, PinKind::resource_template})
        if (to_string(kind) == name) return kind;
    return std::nullopt;
}

std::string definition_digest(const json::object& definition) {
    return mcp::sha256_digest(core::canonical_json(definition));
}

namespace {

// The canonical JSON of pin_of(tool).definition, written from the tool's fields and `raw` in the members' sorted
// order: each member is the typed field when the tool has it, else what `raw` holds (as Tool::to_json() puts them
// together). tool_pins_test checks digest_of against pin_of, which hashes the definition it builds.
std::string canonical_definition(const mcp::Tool& t) {
    std::string out;
    out.reserve(1024);
    out += '{';
    const auto member = [&](std::string_view key) {
        if (out.size() > 1) out += ',';
        core::append_canonical_string(out, key);
        out += ':';
    };
    const auto from_raw = [&](std::string_view key) {
        if (const auto* v = t.raw.if_contains(key)) {
            member(key);
            core::append_canonical_json(out, *v);
        }
    };
    const auto text = [&](std::string_view key, const std::string& typed) {
        if (typed.empty()) return from_raw(key);
        member(key);
        core::append_canonical_string(out, typed);
    };
    // Sorted: "_meta" < "annotations" < "description" < "execution" < "inputSchema" < "name" < "outputSchema" <
    // "title".
    if (const auto* meta = t.raw.if_contains("_meta"); meta && meta->is_object()) {
        const auto* ui = meta->get_object().if_contains("ui");
        const auto* legacy = meta->get_object().if_contains("ui/resourceUri");
        if (ui || legacy) {
            member("_meta");
            out += '{';
            if (ui) {
                out += "\"ui\":";
                core::append_canonical_json(out, *ui);
            }
            if (legacy) {
                out += ui ? ",\"ui/resourceUri\":" : "\"ui/resourceUri\":";
                core::append_canonical_json(out, *legacy);
            }
            out += '}';
        }
    }
    from_raw("annotations");
    text("description", t.description);
    from_raw("execution");
    if (t.raw.contains("inputSchema")) {
        from_raw("inputSchema");
    } else {
        member("inputSchema");
        core::append_canonical_json(out, t.input_schema);
    }
    text("name", t.name);
    if (t.output_schema) {
        member("outputSchema");
        core::append_canonical_json(out, *t.output_schema);
    } else {
        from_raw("outputSchema");
    }
    text("title", t.title);
    out += '}';
    return out;
}

}  // namespace

std::string digest_of(const mcp::Tool& tool) { return mcp::sha256_digest(canonical_definition(tool)); }

Pin pin_of(const mcp::Tool& tool) {
    auto whole = tool.to_json();  // a copy already: its members are moved, not copied again
    json::object definition;
    for (std::string_view key :
         {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "execution"})
        if (auto* v = whole.if_contains(key)) definition[key] = std::move(*v);
    // What a host acts on in _meta: the MCP App (its view and who may call the tool), also under its legacy key.
    if (const auto* meta = whole.if_contains("_meta"); meta && meta->is_object())
        if (auto ui = pick(meta->get_object(), {"ui", "ui/resourceUri"}); !ui.empty())
            definition["_meta"] = std::move(ui);
    return pin(std::move(definition));
}

Pin pin_of(const mcp::Prompt& prompt) {
    auto definition = pick(prompt.raw, {"name", "title", "description", "arguments"});
    definition["name"] = prompt.name;
    return pin(std::move(definition));
}

Pin pin_of(const mcp::ResourceTemplate& t) {
    auto definition = pick(t.raw, {"uriTemplate", "name", "title", "description", "mimeType", "annotations"});
    definition["uriTemplate"] = t.uri_template;
    definition["name"] = t.name;
    return pin(std::move(definition));
}

std::string HeldDefinition::describe() const {
    if (!pinned)
        return fmt::format("{} \"{}\" of server \"{}\" is new since the server's definitions were approved",
                           to_string(kind), name, server);
    return fmt::format("{} \"{}\" of server \"{}\" changed since it was approved ({})", to_string(kind), name, server,
                       fmt::join(changed, ", "));
}

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

}  // namespace

std::string definition_diff(const HeldDefinition& h) {
    const auto a = h.pinned ? lines_of(core::pretty_json(h.pinned->definition)) : std::vector<std::string>{};
    const auto b = lines_of(core::pretty_json(h.now.definition));
    // The longest common subsequence of lines (definitions are a few hundred lines at most).
    std::vector<std::vector<std::uint32_t>> lcs(a.size() + 1, std::vector<std::uint32_t>(b.size() + 1, 0));
    for (std::size_t i = a.size(); i-- > 0;)
        for (std::size_t j = b.size(); j-- > 0;)
            lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    std::string out;
    std::size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        if (i < a.size() && j < b.size() && a[i] == b[j]) {
            out += "  " + a[i++] + "\n";
            ++j;
        } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
            out += "- " + a[i++] + "\n";  // what went, before what came in its place
        } else {
            out += "+ " + b[j++] + "\n";
        }
    }
    return out;
}

json::object to_json(const HeldDefinition& h) {
    json::array changed;
    for (const auto& c : h.changed) changed.emplace_back(c);
    json::object o{{"kind", to_string(h.kind)},     {"name", h.name},
                   {"changed", std::move(changed)}, {"digest", h.now.digest},
                   {"description", h.describe()},   {"diff", definition_diff(h)}};
    if (h.pinned) o["pinnedDigest"] = h.pinned->digest;
    return o;
}

std::string held_message(const HeldDefinition& h) {
    return fmt::format(
        "{}: held until a person approves it (`switchboard pins diff {}/{}`, then `switchboard pins "
        "approve {}/{}`)",
        h.describe(), h.server, h.name, h.server, h.name);
}

fs::path PinStore::file_for(const std::string& config_source) {
    std::error_code ec;
    if (config_source.empty() || !fs::is_regular_file(config_source, ec)) return {};
    // Absolute: `serve` reports it, and a relative one would name a different file once the directory changes.
    const fs::path config = fs::absolute(config_source, ec).lexically_normal();
    auto stem = config.filename().string();
    if (const auto dot = stem.rfind('.'); dot != std::string::npos && dot > 0) stem.resize(dot);
    return config.parent_path() / (stem + ".lock.json");
}

std::map<std::string, Pin, std::less<>>& PinStore::ServerPins::of(PinKind kind) {
    return kind == PinKind::tool ? tools : kind == PinKind::prompt ? prompts : templates;
}

const std::map<std::string, Pin, std::less<>>& PinStore::ServerPins::of(PinKind kind) const {
    return kind == PinKind::tool ? tools : kind == PinKind::prompt ? prompts : templates;
}

bool PinStore::load(std::string* error) {
    if (file_.empty()) return true;
    std::ifstream in(file_, std::ios::binary);
    if (!in) {
        std::error_code ec;
        if (!fs::exists(file_, ec)) {
            servers_.clear();
            return true;
        }
        if (error) *error = fmt::format("cannot read {}", file_.string());
        return false;
    }
    std::stringstream text;
    text << in.rdbuf();
    json::error_code ec;
    const auto doc = json::parse(text.str(), ec);
    const auto* o = doc.if_object();
    const auto* servers = o ? o->if_contains("servers") : nullptr;
    if (ec || !servers || !servers->is_object()) {
        if (error)
            *error =
                fmt::format("{}: not a lockfile ({})", file_.string(), ec ? ec.message() : "no \"servers\" object");
        return false;
    }
    std::map<std::string, ServerPins, std::less<>> loaded;
    for (const auto& [name, entry] : servers->get_object()) {
        auto& pins = loaded[std::string(name)];
        const auto* e = entry.if_object();
        if (!e) continue;
        for (auto kind : {PinKind::tool, PinKind::prompt, PinKind::resource_template}) {
            const auto* list = e->if_contains(plural(kind));
            if (!list || !list->is_object()) continue;
            for (const auto& [item, pinned] : list->get_object()) {
                const auto* p = pinned.if_object();
                const auto* definition = p ? p->if_contains("definition") : nullptr;
                if (!definition || !definition->is_object()) continue;
                // The digest is worked out again: a hand-edited definition counts as what it says.
                pins.of(kind)[std::string(item)] = pin(definition->get_object());
            }
        }
    }
    servers_ = std::move(loaded);
    return true;
}

bool PinStore::save(std::string* error) const {
    if (file_.empty()) return true;
    json::object servers;
    for (const auto& [name, pins] : servers_) {
        json::object entry;
        for (auto kind : {PinKind::tool, PinKind::prompt, PinKind::resource_template}) {
            json::object list;
            for (const auto& [item, p] : pins.of(kind))
                list[item] = json::object{{"digest", p.digest}, {"definition", p.definition}};
            entry[plural(kind)] = std::move(list);
        }
        servers[name] = std::move(entry);
    }
    json::object doc{{"lockfileVersion", lockfile_version},
                     {"about",
                      "The tool, prompt and resource-template definitions approved for the servers of "
                      "the config beside this file (`switchboard pins`). A definition a server changes, or "
                      "adds, is held until `switchboard pins approve SERVER/NAME`. Commit it with the "
                      "config."},
                     {"servers", std::move(servers)}};
    core::AtomicWriteOptions options;
    if (auto why = core::write_file_atomically(file_, core::pretty_json(doc) + "\n", options); !why.empty()) {
        if (error) *error = why;
        return false;
    }
    return true;
}

const Pin* PinStore::pinned(std::string_view server, PinKind kind, std::string_view name) const {
    auto s = servers_.find(server);
    if (s == servers_.end()) return nullptr;
    const auto& list = s->second.of(kind);
    auto it = list.find(name);
    return it == list.end() ? nullptr : &it->second;
}

void PinStore::set(const std::string& server, PinKind kind, const std::string& name, Pin p) {
    servers_[server].of(kind)[name] = std::move(p);
}

void PinStore::reset(std::string_view server) {
    if (auto it = servers_.find(server); it != servers_.end()) servers_.erase(it);
}

void PinStore::add_server(const std::string& server) { servers_[server]; }

std::size_t PinStore::count(std::string_view server) const {
    auto s = servers_.find(server);
    if (s == servers_.end()) return 0;
    return s->second.tools.size() + s->second.prompts.size() + s->second.templates.size();
}

std::vector<HeldDefinition> PinStore::check(const std::string& server, PinKind kind,
                                            const std::vector<std::pair<std::string, Pin>>& listed) const {
    std::vector<HeldDefinition> held;
    for (const auto& [name, now] : listed) {
        const auto* p = pinned(server, kind, name);
        if (p && *p == now) continue;
        HeldDefinition h{kind, server, name, p ? std::optional<Pin>(*p) : std::nullopt, now, {}};
        h.changed = p ? changed_fields(p->definition, now.definition) : std::vector<std::string>{"new"};
        held.push_back(std::move(h));
    }
    return held;
}

}  // namespace switchboard::host
