#include <switchboard/agent/tool_search.hpp>

#include <switchboard/agent/tool_runner.hpp>
#include <switchboard/core/json_number.hpp>
#include <switchboard/host/tool_index.hpp>
#include <switchboard/mcp/apps.hpp>

#include <fmt/format.h>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace switchboard::agent {

namespace asio = boost::asio;
namespace json = boost::json;
using Status = llm::ToolExecutionResult::Status;

// ---- tokens and BM25 ---------------------------------------------------------------------------------------------

std::vector<std::string> search_tokens(std::string_view text) {
    std::vector<std::string> out;
    std::string word;
    auto flush = [&] {
        if (!word.empty()) out.push_back(std::move(word));
        word.clear();
    };
    auto upper_c = [](char c) { return c >= 'A' && c <= 'Z'; };
    auto lower_c = [](char c) { return c >= 'a' && c <= 'z'; };
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const auto u = static_cast<unsigned char>(c);
        if (!upper_c(c) && !lower_c(c) && !digit(c) && u < 0x80) {
            flush();  // _ - . space punctuation
            continue;
        }
        if (upper_c(c) && !word.empty()) {
            const char prev = text[i - 1];
            const bool next_lower = i + 1 < text.size() && lower_c(text[i + 1]);
            // fooBar → foo|Bar; HTTPResponse → HTTP|Response; foo2Bar → foo2|Bar
            if (lower_c(prev) || digit(prev) || (upper_c(prev) && next_lower)) flush();
        }
        word += u < 0x80 ? static_cast<char>(std::tolower(u)) : c;
    }
    flush();
    return out;
}

void Bm25::add(const std::vector<std::string>& tokens) {
    std::map<std::string, int> counts;
    for (const auto& t : tokens) ++counts[t];
    Doc d;
    d.counts.assign(counts.begin(), counts.end());
    d.length = tokens.size();
    total_length_ += d.length;
    docs_.push_back(std::move(d));
}

double Bm25::score(std::size_t doc, const std::vector<std::string>& query) const {
    if (doc >= docs_.size()) return 0;
    const double n_docs = static_cast<double>(docs_.size());
    const double avg = total_length_ ? static_cast<double>(total_length_) / n_docs : 1.0;
    auto frequency = [](const Doc& d, const std::string& t) -> int {
        auto it = std::lower_bound(d.counts.begin(), d.counts.end(), t,
                                   [](const auto& entry, const std::string& key) { return entry.first < key; });
        return it != d.counts.end() && it->first == t ? it->second : 0;
    };
    const std::set<std::string> distinct(query.begin(), query.end());
    const auto& d = docs_[doc];
    double total = 0;
    for (const auto& t : distinct) {
        const int f = frequency(d, t);
        if (!f) continue;
        std::size_t having = 0;
        for (const auto& other : docs_) having += frequency(other, t) ? 1 : 0;
        const double idf = std::log(1.0 + (n_docs - having + 0.5) / (having + 0.5));
        const double norm = k1_ * (1.0 - b_ + b_ * static_cast<double>(d.length) / avg);
        total += idf * (f * (k1_ + 1.0)) / (f + norm);
    }
    return total;
}

std::vector<std::pair<std::size_t, double>> Bm25::rank(const std::vector<std::string>& query,
                                                       std::size_t limit) const {
    std::vector<std::pair<std::size_t, double>> scored;
    for (std::size_t i = 0; i < docs_.size(); ++i)
        if (const double s = score(i, query); s > 0) scored.emplace_back(i, s);
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (scored.size() > limit) scored.resize(limit);
    return scored;
}

std::vector<std::string> SearchableTool::tokens() const {
    auto out = search_tokens(tool.name);
    auto add = [&out](std::string_view text) {
        for (auto& t : search_tokens(text)) out.push_back(std::move(t));
    };
    add(server);
    add(tool.title);
    add(tool.description);
    if (const auto* props = tool.input_schema.if_contains("properties"); props && props->is_object())
        for (const auto& p : props->get_object()) add(p.key());
    return out;
}

std::vector<std::size_t> rank_tools(const std::vector<SearchableTool>& tools, std::string_view query,
                                    std::size_t limit) {
    Bm25 index;
    for (const auto& t : tools) index.add(t.tokens());
    std::vector<std::size_t> out;
    for (const auto& [i, score] : index.rank(search_tokens(query), limit)) out.push_back(i);
    return out;
}

// ---- the catalog as searched -------------------------------------------------------------------------------------

std::vector<SearchableTool> searchable_tools(const ToolSearchEnvironment& env, std::vector<std::string>* uncatalogued) {
    std::vector<SearchableTool> out;
    for (const auto& sc : env.pool->config().servers) {
        if (!sc.lazy || !sc.enabled || !sc.invalid.empty()) continue;
        if (env.main && !env.main->server_enabled(sc.name)) continue;
        std::vector<mcp::Tool> tools;
        bool known = false;
        // A server that is up answers from its live list; a dormant one from the catalog, without starting it.
        if (env.pool->phase(sc.name) == host::Phase::connected) {
            if (auto live = env.pool->tools(sc.name)) {
                for (const auto& t : *live)
                    if (host::tool_allowed(t.name, sc.allowed_tools, sc.excluded_tools)) tools.push_back(t);
                known = true;
            }
        }
        if (!known) {
            if (auto entry = env.catalog.load(sc)) {
                tools = std::move(entry->tools);
                known = true;
            }
        }
        if (!known) {
            if (uncatalogued) uncatalogued->push_back(sc.name);
            continue;
        }
        for (auto& t : tools) {
            if (env.main && !env.main->tool_enabled(sc.name, t.name)) continue;
            if (!mcp::model_visible(t)) continue;  // an MCP App's own tool
            out.push_back(SearchableTool{sc.name, std::move(t)});
        }
    }
    return out;
}

std::optional<host::ResolvedTool> split_qualified(const host::ServerPool& pool, std::string_view name) {
    std::optional<host::ResolvedTool> best;
    for (const auto& sc : pool.config().servers) {
        const auto prefix = sc.name + "__";
        if (name.size() <= prefix.size() || !name.starts_with(prefix)) continue;
        if (best && best->server.size() >= sc.name.size()) continue;
        best = host::ResolvedTool{sc.name, std::string(name.substr(prefix.size()))};
    }
    return best;
}

bool tool_search_wanted(std::optional<bool> configured, bool any_lazy_server, std::size_t tool_definition_bytes,
                        std::optional<std::int64_t> context_window) {
    if (configured) return *configured;
    if (!any_lazy_server || !context_window || *context_window <= 0) return false;
    // bytes/4 tokens, more than a tenth of the window: tokens * 10 > window.
    return static_cast<std::int64_t>(tool_definition_bytes / 4) * 10 > *context_window;
}

// ---- the two tools -----------------------------------------------------------------------------------------------

namespace {

/// The arguments of a call as an object, or nullopt with an error result in `error`.
std::optional<json::object> arguments_of(const llm::ToolCall& call, llm::ToolExecutionResult& error) {
    std::string parse_error;
    auto args = llm::parse_tool_arguments(call.arguments, parse_error);
    if (!args) error = llm::error_result(call, "switchboard", fmt::format("{} was not run: {}", call.name, parse_error),
                                         Status::bad_arguments);
    return args;
}

/// call_tool's `arguments`: an object, or a string holding one (models sometimes quote it); absent: {}.
std::optional<json::object> inner_arguments(const json::object& args) {
    const auto* a = args.if_contains("arguments");
    if (!a || a->is_null()) return json::object{};
    if (const auto* o = a->if_object()) return *o;
    if (const auto* s = a->if_string()) {
        std::string error;
        return llm::parse_tool_arguments(std::string(*s), error);
    }
    return std::nullopt;
}

std::string string_arg(const json::object& args, std::string_view key) {
    const auto* v = args.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

llm::ToolExecutionResult text_result(const llm::ToolCall& call, std::string text) {
    llm::ToolExecutionResult r;
    r.tool_call_id = call.id;
    r.name = call.name;
    r.server = "switchboard";
    r.parts.push_back(llm::MessagePart::make_text(std::move(text)));
    return r;
}

LocalTool search_tool(std::shared_ptr<const ToolSearchEnvironment> env) {
    LocalTool t;
    t.name = "search_tools";
    t.description =
        "Searches the tools of servers that are not loaded (they start only when called). Returns the best matches "
        "as JSON: name (server__tool), server, description, inputSchema. Call one with call_tool.";
    json::object query_schema{{"type", "string"}, {"description", "What the tool should do, in a few words"}};
    json::object limit_schema{{"type", "integer"},
                              {"description", fmt::format("How many results (default {}, at most {})",
                                                          default_search_limit, max_search_limit)},
                              {"minimum", 1},
                              {"maximum", max_search_limit}};
    t.parameters = json::object{
        {"type", "object"},
        {"properties", json::object{{"query", std::move(query_schema)}, {"limit", std::move(limit_schema)}}},
        {"required", json::array{"query"}}};
    t.run = [env](llm::ToolCall call, Observer&) -> asio::awaitable<llm::ToolExecutionResult> {
        llm::ToolExecutionResult error;
        auto args = arguments_of(call, error);
        if (!args) co_return error;
        const auto query = string_arg(*args, "query");
        if (query.empty())
            co_return llm::error_result(call, "switchboard", "search_tools needs a string argument \"query\"",
                                        Status::bad_arguments);
        std::size_t limit = default_search_limit;
        if (const auto* l = args->if_contains("limit")) {
            if (const auto n = core::json_integer(*l)) limit = *n < 1 ? 1 : static_cast<std::size_t>(*n);
        }
        limit = std::min(limit, max_search_limit);
        std::vector<std::string> uncatalogued;
        const auto tools = searchable_tools(*env, &uncatalogued);
        json::array results;
        for (auto i : rank_tools(tools, query, limit)) {
            const auto& t = tools[i];
            results.push_back(json::object{{"name", t.qualified_name()},
                                           {"server", t.server},
                                           {"description", t.tool.description},
                                           {"inputSchema", t.tool.input_schema}});
        }
        auto text = json::serialize(results);
        if (!uncatalogued.empty())
            text += fmt::format("\n(Not searchable yet, no catalog: {}. `switchboard catalog refresh` records them.)",
                                fmt::join(uncatalogued, ", "));
        co_return text_result(call, std::move(text));
    };
    return t;
}

LocalTool call_tool(std::shared_ptr<const ToolSearchEnvironment> env) {
    LocalTool t;
    t.name = "call_tool";
    t.description =
        "Calls a tool found with search_tools: name is its server__tool name, arguments an object matching its "
        "inputSchema. Its server is started for the call.";
    json::object name_schema{{"type", "string"}, {"description", "server__tool, as search_tools returned it"}};
    json::object arguments_schema{{"type", "object"}, {"description", "The tool's arguments"}};
    t.parameters = json::object{
        {"type", "object"},
        {"properties", json::object{{"name", std::move(name_schema)}, {"arguments", std::move(arguments_schema)}}},
        {"required", json::array{"name"}}};
    t.approve_as = [env](const llm::ToolCall& call) -> std::optional<ApprovalRequest> {
        std::string parse_error;
        auto args = llm::parse_tool_arguments(call.arguments, parse_error);
        if (!args) return std::nullopt;
        const auto name = string_arg(*args, "name");
        auto resolved = split_qualified(*env->pool, name);
        if (!resolved) return std::nullopt;
        auto inner = inner_arguments(*args);
        ApprovalRequest r;
        r.name = name;
        r.server = resolved->server;
        r.tool = resolved->tool;
        r.arguments = inner ? json::serialize(*inner) : std::string("{}");
        return r;
    };
    t.run = [env](llm::ToolCall call, Observer&) -> asio::awaitable<llm::ToolExecutionResult> {
        llm::ToolExecutionResult error;
        auto args = arguments_of(call, error);
        if (!args) co_return error;
        const auto name = string_arg(*args, "name");
        auto resolved = split_qualified(*env->pool, name);
        if (!resolved)
            co_return llm::error_result(
                call, "switchboard",
                fmt::format("call_tool needs \"name\" as server__tool of a configured server (from search_tools){}",
                            name.empty() ? "" : fmt::format("; \"{}\" is not one", name)),
                Status::unknown_tool);
        auto inner = inner_arguments(*args);
        if (!inner)
            co_return llm::error_result(call, resolved->server, "call_tool: \"arguments\" must be a JSON object",
                                        Status::bad_arguments);
        if (env->main && (!env->main->server_enabled(resolved->server) ||
                          !env->main->tool_enabled(resolved->server, resolved->tool)))
            co_return llm::error_result(call, resolved->server,
                                        fmt::format("tool \"{}\" is switched off in this conversation", name),
                                        Status::unknown_tool);
        // A short-lived context that sees nothing but may call any configured server by `server__tool`: the pool
        // leases the server for this one call (a dormant one starts, and stops after its keepWarmSeconds), and the
        // config's allowedTools/excludedTools still apply.
        host::ContextOptions options;
        options.name = "tool-search";
        options.servers = std::vector<std::string>{};
        options.calls_to_unseen_servers = true;
        auto context = host::Context::create(env->pool, std::move(options));
        llm::ToolCall inner_call;
        inner_call.id = call.id;
        inner_call.name = name;
        inner_call.arguments = json::serialize(*inner);
        host::ToolCallOptions call_options;
        call_options.call_id = call.id;
        call_options.trace = call.trace;  // under the model turn that asked
        auto r = co_await execute_tool(*context, std::move(inner_call), std::move(call_options));
        r.name = call.name;
        co_return r;
    };
    return t;
}

}  // namespace

std::vector<LocalTool> tool_search_tools(ToolSearchEnvironment env) {
    auto shared = std::make_shared<const ToolSearchEnvironment>(std::move(env));
    std::vector<LocalTool> out;
    out.push_back(search_tool(shared));
    out.push_back(call_tool(shared));
    return out;
}

}  // namespace switchboard::agent
