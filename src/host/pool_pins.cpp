// Pins (tool_pins.hpp) in the pool: what a server lists is checked against its approved definitions at every listing
// (connect, reconnect, list_changed, a lazy server's start); what does not match is held, and the lists every context,
// the gateway and the web UI see are what matches. A server seen for the first time is pinned as it is (trust on first
// use), unless the store is strict.
#include "pool_server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

namespace switchboard::host {

namespace {

std::string digest_of_item(const mcp::Tool& t) { return digest_of(t); }
template <class T>
std::string digest_of_item(const T& item) {
    return pin_of(item).digest;  // prompts and templates: few and small
}

template <class T>
std::vector<std::string> digests_of(const std::vector<T>& items) {
    std::vector<std::string> out;
    out.reserve(items.size());
    for (const auto& item : items) out.push_back(digest_of_item(item));
    return out;
}

// The pins, definitions built, of the items whose digest is not their pin's: the few PinStore::check may hold.
template <class T>
std::vector<std::pair<std::string, Pin>> unmatched(const PinStore& pins, const std::string& server, PinKind kind,
                                                   const std::vector<T>& items,
                                                   const std::vector<std::string>& digests) {
    std::vector<std::pair<std::string, Pin>> out;
    for (std::size_t i = 0; i < items.size() && i < digests.size(); ++i) {
        const auto* p = pins.pinned(server, kind, items[i].name);
        if (!p || p->digest != digests[i]) out.emplace_back(items[i].name, pin_of(items[i]));
    }
    return out;
}

template <class T>
void pin_all(PinStore& pins, const std::string& server, PinKind kind, const std::vector<T>& items) {
    for (const auto& item : items) pins.set(server, kind, item.name, pin_of(item));
}

// `items` without those of `kind` that `held` names.
template <class T>
std::vector<T> without_held(const std::vector<T>& items, PinKind kind, const std::vector<HeldDefinition>& held) {
    std::set<std::string_view> names;
    for (const auto& h : held)
        if (h.kind == kind) names.insert(h.name);
    std::vector<T> out;
    for (const auto& item : items)
        if (!names.count(item.name)) out.push_back(item);
    return out;
}

bool same_held(const std::vector<HeldDefinition>& a, const std::vector<HeldDefinition>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
        return x.kind == y.kind && x.name == y.name && x.now == y.now;
    });
}

}  // namespace

void ServerPool::set_served(Server& s, std::optional<std::vector<mcp::Tool>> tools,
                            std::optional<std::vector<mcp::Prompt>> prompts,
                            std::optional<std::vector<mcp::ResourceTemplate>> templates) {
    const bool pinning = options_.pins != nullptr;
    if (tools) {
        if (pinning) s.tool_digests = digests_of(*tools);
        s.served_tools = std::make_shared<const std::vector<mcp::Tool>>(std::move(*tools));
    }
    if (prompts) {
        if (pinning) s.prompt_digests = digests_of(*prompts);
        s.served_prompts = std::move(*prompts);
    }
    if (templates) {
        if (pinning) s.template_digests = digests_of(*templates);
        s.served_templates = std::move(*templates);
    }
    apply_pins(s);
}

void ServerPool::apply_pins(Server& s) {
    const auto& pins = options_.pins;
    if (!pins) {
        s.tools = s.served_tools;
        s.prompts = s.served_prompts;
        s.listing.templates = s.served_templates;
        return;
    }
    const auto& name = s.config.name;
    const bool listed = !s.served_tools->empty() || !s.served_prompts.empty() || !s.served_templates.empty();
    if (listed && !pins->knows(name) && !pins->strict()) {
        // Trust on first use: what a server offers the first time it is seen is what is approved.
        pins->add_server(name);
        pin_all(*pins, name, PinKind::tool, *s.served_tools);
        pin_all(*pins, name, PinKind::prompt, s.served_prompts);
        pin_all(*pins, name, PinKind::resource_template, s.served_templates);
        std::string error;
        if (!pins->save(&error))
            spdlog::warn("server \"{}\": its definitions are pinned for this run only: {}", name, error);
    }
    auto held =
        pins->check(name, PinKind::tool, unmatched(*pins, name, PinKind::tool, *s.served_tools, s.tool_digests));
    for (auto& h : pins->check(name, PinKind::prompt,
                               unmatched(*pins, name, PinKind::prompt, s.served_prompts, s.prompt_digests)))
        held.push_back(std::move(h));
    for (auto& h :
         pins->check(name, PinKind::resource_template,
                     unmatched(*pins, name, PinKind::resource_template, s.served_templates, s.template_digests)))
        held.push_back(std::move(h));
    // Nothing held (the usual case): the served lists as they are, shared, not copied.
    s.tools = held.empty()
                  ? s.served_tools
                  : std::make_shared<const std::vector<mcp::Tool>>(without_held(*s.served_tools, PinKind::tool, held));
    s.prompts = without_held(s.served_prompts, PinKind::prompt, held);
    s.listing.templates = without_held(s.served_templates, PinKind::resource_template, held);
    const bool changed = !same_held(held, s.held);
    s.held = std::move(held);
    if (changed) events_.emit(Event::pins_held(name, s.held.size()));
}

std::vector<HeldDefinition> ServerPool::held(std::string_view server) const {
    auto s = find(server);
    return s ? s->held : std::vector<HeldDefinition>{};
}

const HeldDefinition* ServerPool::held_named(std::string_view server, PinKind kind, std::string_view name) const {
    auto s = find(server);
    if (!s) return nullptr;
    for (const auto& h : s->held)
        if (h.kind == kind && h.name == name) return &h;
    return nullptr;
}

Outcome<std::size_t> ServerPool::approve_pins(const std::string& server, const std::string& name,
                                              std::optional<PinKind> kind) {
    auto s = find(server);
    if (!s) return Error::make_local(code::invalid_params, fmt::format("no server \"{}\"", server));
    if (!options_.pins) return Error::make_local(code::invalid_params, "nothing is pinned here (no lockfile)");
    std::size_t approved = 0;
    options_.pins->add_server(server);  // strict mode: a server never pinned is pinned now, with what is approved
    for (const auto& h : s->held)
        if ((name.empty() || h.name == name) && (!kind || h.kind == *kind)) {
            options_.pins->set(server, h.kind, h.name, h.now);
            ++approved;
        }
    if (approved == 0 && !name.empty())
        return Error::make_local(code::invalid_params,
                                 fmt::format("server \"{}\" holds nothing named \"{}\"", server, name));
    std::string error;
    if (!options_.pins->save(&error)) return Error::make_local(code::internal_error, error);
    apply_pins(*s);
    events_.emit(Event::tools_changed(server));
    events_.emit(Event::prompts_changed(server));
    events_.emit(Event::resources_changed(server));
    return approved;
}

Outcome<void> ServerPool::reset_pins(const std::string& server) {
    auto s = find(server);
    if (!s) return Error::make_local(code::invalid_params, fmt::format("no server \"{}\"", server));
    if (!options_.pins) return Error::make_local(code::invalid_params, "nothing is pinned here (no lockfile)");
    options_.pins->reset(server);
    std::string error;
    if (!options_.pins->save(&error)) return Error::make_local(code::internal_error, error);
    apply_pins(*s);  // pinned again as it is now (first use), or all of it held in strict mode
    events_.emit(Event::tools_changed(server));
    events_.emit(Event::prompts_changed(server));
    events_.emit(Event::resources_changed(server));
    return Outcome<void>{};
}

Outcome<void> ServerPool::reload_pins() {
    if (!options_.pins) return Outcome<void>{};
    std::string error;
    if (!options_.pins->load(&error)) return Error::make_local(code::internal_error, error);
    for (const auto& [name, s] : servers_) {
        const auto before = s->held.size();
        const auto tools_before = s->tools;
        apply_pins(*s);
        if (before == 0 && s->held.empty() && tools_before == s->tools) continue;
        events_.emit(Event::tools_changed(name));
        events_.emit(Event::prompts_changed(name));
        events_.emit(Event::resources_changed(name));
    }
    return Outcome<void>{};
}

}  // namespace switchboard::host
