#include <switchboard/agent/mcp_skills.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace switchboard::agent {

namespace asio = boost::asio;
namespace json = boost::json;
using Status = llm::ToolExecutionResult::Status;

namespace {

bool taken(const std::vector<Definition>& defs, std::string_view name) {
    return std::any_of(defs.begin(), defs.end(), [&](const Definition& d) {
        return d.kind == Definition::Kind::skill && d.name == name;
    });
}

// Reads one file of a served skill and checks it against the entry. Empty `error`: the bytes are good.
asio::awaitable<std::optional<std::string>> read_checked(std::shared_ptr<mcp::ClientSession> session,
                                                         const mcp::Skill& skill, std::string uri,
                                                         std::string& error) {
    auto r = co_await session->read_resource(uri);
    if (!r) {
        error = fmt::format("reading {} failed: {}", uri, r.error().message);
        co_return std::nullopt;
    }
    auto bytes = mcp::resource_bytes(*r);
    if (!bytes) {
        error = fmt::format("{} has no content", uri);
        co_return std::nullopt;
    }
    error = mcp::verify_skill_file(skill, uri, *bytes);
    if (!error.empty()) co_return std::nullopt;
    co_return bytes;
}

// Adds the entries one server lists (live, or from the catalog) under the naming rule of add_mcp_skills.
void add_listed(const std::string& server, std::vector<mcp::Skill> listed, bool from_catalog,
                std::vector<Definition>& definitions, std::vector<std::string>& notes) {
    for (auto& skill : listed) {
        Definition d;
        d.kind = Definition::Kind::skill;
        d.name = skill.name();
        d.description = skill.description();
        d.origin = "mcp:" + server;
        d.required = {server};
        d.fork = false;  // until its SKILL.md says `context: fork`
        d.from_catalog = from_catalog;
        if (!is_valid_name(d.name)) {
            notes.push_back(fmt::format("server \"{}\": skill {} left out: invalid name \"{}\"", server, skill.uri,
                                        d.name));
            continue;
        }
        if (taken(definitions, d.name)) {
            auto renamed = fmt::format("{}-{}", server, d.name);
            if (!is_valid_name(renamed) || taken(definitions, renamed)) {
                notes.push_back(
                    fmt::format("server \"{}\": skill \"{}\" left out: the name is taken", server, d.name));
                continue;
            }
            notes.push_back(fmt::format("server \"{}\": skill \"{}\" offered as \"{}\" (the name is taken)", server,
                                        d.name, renamed));
            d.name = std::move(renamed);
        }
        d.served = std::move(skill);
        definitions.push_back(std::move(d));
    }
}

}  // namespace

void add_catalog_skills(const host::ServerConfig& server, const host::ToolCatalog& catalog,
                        std::vector<Definition>& definitions, std::vector<std::string>& notes) {
    auto entry = catalog.load(server);
    if (!entry || !entry->skills) return;
    add_listed(server.name, std::move(*entry->skills), true, definitions, notes);
}

asio::awaitable<void> add_mcp_skills(std::shared_ptr<host::ServerPool> pool, std::vector<Definition>& definitions,
                                     std::vector<std::string>& notes, std::optional<host::ToolCatalog> catalog) {
    for (const auto& st : pool->status()) {
        if (st.phase != host::Phase::connected) {
            // A lazy server is not started to be asked: what it listed when it last ran, if recorded.
            const auto* sc = pool->server_config(st.name);
            if (catalog && sc && sc->lazy && sc->enabled) add_catalog_skills(*sc, *catalog, definitions, notes);
            continue;
        }
        auto session = co_await pool->session(st.name);
        if (!session || !(*session)->has_extension(mcp::skills_extension)) continue;
        std::vector<std::string> warnings;
        auto listed = co_await mcp::list_skills(*session, warnings);
        for (auto& w : warnings) notes.push_back(fmt::format("server \"{}\": skill left out: {}", st.name, w));
        if (!listed) {
            notes.push_back(fmt::format("server \"{}\": skills/list failed: {}", st.name, listed.error().message));
            continue;
        }
        add_listed(st.name, std::move(*listed), false, definitions, notes);
    }
}

asio::awaitable<void> add_mcp_skills(std::shared_ptr<host::ServerPool> pool, std::vector<Definition>& definitions,
                                     std::vector<std::string>& notes) {
    co_await add_mcp_skills(std::move(pool), definitions, notes, std::nullopt);
}

asio::awaitable<std::string> load_mcp_skill(std::shared_ptr<host::ServerPool> pool, Definition& d) {
    const auto server = d.required.front();  // a served skill's only server is its own (add_mcp_skills)
    // Leased before it is asked: a dormant lazy server (a skill listed from the catalog) starts now, and stays up
    // while the loaded copy runs (its fork takes a lease of its own too).
    auto lease = co_await pool->acquire(server);
    if (!lease)
        co_return fmt::format("skill \"{}\": server \"{}\" is unavailable: {}", d.name, server, lease.error().message);
    auto session = co_await pool->session(server);
    if (!session)
        co_return fmt::format("skill \"{}\": server \"{}\" is unavailable: {}", d.name, server,
                              session.error().message);
    if (!(*session)->has_extension(mcp::skills_extension))
        co_return fmt::format("skill \"{}\": server \"{}\" no longer serves skills (it does not declare {})", d.name,
                              server, mcp::skills_extension);
    auto skill = *d.served;
    std::string error;
    auto text = co_await read_checked(*session, skill, skill.uri, error);
    if (!text) {
        // The skill may have changed since it was listed: its current entry, once.
        auto fresh = co_await mcp::get_skill(*session, skill.uri);
        if (fresh) {
            skill = std::move(*fresh);
            std::string again;
            text = co_await read_checked(*session, skill, skill.uri, again);
            if (!text) error = std::move(again);
        }
    }
    if (!text) co_return fmt::format("skill \"{}\" from server \"{}\" failed verification: {}", d.name, server, error);

    std::string parse_error;
    auto parsed = parse_definition(*text, Definition::Kind::skill, std::filesystem::path(skill.uri), parse_error);
    if (!parsed) co_return fmt::format("skill \"{}\" from server \"{}\": {}", d.name, server, parse_error);
    // The file must say what the entry said (the host showed the entry; it runs the file).
    if (parsed->name != skill.name() || parsed->description != skill.description())
        co_return fmt::format("skill \"{}\" from server \"{}\" failed verification: its SKILL.md names \"{}\" ({}), "
                              "the entry \"{}\" ({})",
                              d.name, server, parsed->name, parsed->description, skill.name(), skill.description());
    d.body = std::move(parsed->body);
    d.fork = parsed->fork;
    d.run_as = std::move(parsed->run_as);
    d.model = std::move(parsed->model);
    d.max_turns = parsed->max_turns;
    d.tools = std::move(parsed->tools);
    // Not taken from a served file: its `mcp:` / `mcpServers` (servers of ours, or processes to start) and its
    // `allowed-tools` (permissions). Its own server is what it declares.
    d.served = std::move(skill);
    d.hold = std::make_shared<host::Lease>(std::move(*lease));
    co_return std::string();
}

LocalTool read_skill_file_tool(std::shared_ptr<host::ServerPool> pool, std::shared_ptr<LoadedSkills> loaded) {
    LocalTool t;
    t.name = "read_skill_file";
    t.description =
        "Reads a file of a skill that was loaded (the skill's result lists its files by URI), checked against the "
        "digest its server published.";
    t.parameters = json::object{
        {"type", "object"},
        {"properties", json::object{{"uri", json::object{{"type", "string"}, {"description", "The file's URI"}}}}},
        {"required", json::array{"uri"}}};
    t.run = [pool, loaded](llm::ToolCall call, Observer&) -> asio::awaitable<llm::ToolExecutionResult> {
        std::string parse_error;
        auto args = llm::parse_tool_arguments(call.arguments, parse_error);
        const auto* uri = args ? args->if_contains("uri") : nullptr;
        if (!uri || !uri->is_string())
            co_return llm::error_result(call, "switchboard", "read_skill_file needs a string argument \"uri\"",
                                        Status::bad_arguments);
        const std::string u(uri->get_string());
        const LoadedSkills::Entry* entry = nullptr;
        for (const auto& e : loaded->skills)
            if (e.skill.file(u) || (!e.skill.files && u.starts_with(e.skill.uri.substr(0, e.skill.uri.rfind('/') + 1))))
                entry = &e;
        if (!entry)
            co_return llm::error_result(call, "switchboard",
                                        fmt::format("{} is not a file of a loaded skill (run the skill first; only "
                                                    "the files its entry lists can be read)",
                                                    u),
                                        Status::bad_arguments);
        auto server = entry->server;
        auto skill = entry->skill;
        // Leased for the read: a lazy server may have stopped since the skill was loaded.
        auto lease = co_await pool->acquire(server);
        if (!lease)
            co_return llm::error_result(call, server, fmt::format("server \"{}\" is unavailable: {}", server,
                                                                  lease.error().message));
        auto session = co_await pool->session(server);
        if (!session)
            co_return llm::error_result(call, server, fmt::format("server \"{}\" is unavailable: {}", server,
                                                                  session.error().message));
        std::string error;
        auto bytes = co_await read_checked(*session, skill, u, error);
        if (!bytes) co_return llm::error_result(call, server, fmt::format("{} failed verification: {}", u, error));
        llm::ToolExecutionResult r;
        r.tool_call_id = call.id;
        r.name = call.name;
        r.server = server;
        const bool text = std::all_of(bytes->begin(), bytes->end(),
                                      [](char c) { return c == '\n' || c == '\r' || c == '\t' || c >= 0x20 || c < 0; });
        r.parts.push_back(llm::MessagePart::make_text(
            text ? *bytes : fmt::format("({}: {} bytes of binary content)", u, bytes->size())));
        co_return r;
    };
    return t;
}

}  // namespace switchboard::agent
