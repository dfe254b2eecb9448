#include <switchboard/agent/server_requests.hpp>

#include <switchboard/core/json_number.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/llm/tool_result.hpp>
#include <switchboard/mcp/types.hpp>

#include <fmt/format.h>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cmath>

namespace switchboard::agent {

namespace asio = boost::asio;
namespace json = boost::json;
using jsonrpc::Outcome;

namespace {

std::string string_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

void add_content(llm::Message& msg, const json::value& content) {
    mcp::CallToolResult as_result;
    if (const auto* list = content.if_array()) {
        for (const auto& c : *list) as_result.content.push_back(mcp::Content::from_json(c));
    } else {
        as_result.content.push_back(mcp::Content::from_json(content));
    }
    for (auto& p : llm::format_tool_content(as_result)) msg.content.push_back(std::move(p));
}

jsonrpc::Error refused(std::string message) {
    return jsonrpc::Error{jsonrpc::code::invalid_request, std::move(message), {}, false};
}

}  // namespace

std::vector<llm::Message> sampling_messages(const json::object& params) {
    std::vector<llm::Message> out;
    if (auto system = string_at(params, "systemPrompt"); !system.empty()) out.push_back(llm::Message::system(system));
    if (const auto* list = params.if_contains("messages"); list && list->is_array()) {
        for (const auto& m : list->get_array()) {
            const auto* o = m.if_object();
            if (!o) continue;
            llm::Message msg;
            msg.role = string_at(*o, "role") == "assistant" ? llm::Role::assistant : llm::Role::user;
            if (const auto* c = o->if_contains("content")) add_content(msg, *c);
            out.push_back(std::move(msg));
        }
    }
    return out;
}

json::object sampling_result(const llm::ChatResponse& response, const std::string& model) {
    std::string stop = "endTurn";
    if (response.finish_reason == "length") stop = "maxTokens";
    if (response.finish_reason == "stop_sequence") stop = "stopSequence";
    return json::object{{"role", "assistant"},
                        {"content", json::object{{"type", "text"}, {"text", response.message.text()}}},
                        {"model", model},
                        {"stopReason", stop}};
}

std::string check_elicitation(const json::object& schema, const json::object& value) {
    const auto* props = schema.if_contains("properties");
    const json::object empty;
    const auto& properties = props && props->is_object() ? props->get_object() : empty;
    if (const auto* req = schema.if_contains("required"); req && req->is_array())
        for (const auto& r : req->get_array())
            if (r.is_string() && !value.contains(r.get_string()))
                return fmt::format("\"{}\" is required", std::string(r.get_string()));
    for (const auto& kv : value) {
        const std::string key(kv.key());
        const auto* p = properties.if_contains(kv.key());
        if (!p || !p->is_object()) return fmt::format("\"{}\" is not asked for", key);
        const auto& prop = p->get_object();
        const auto type = string_at(prop, "type");
        const auto& v = kv.value();
        if (type == "string") {
            if (!v.is_string()) return fmt::format("\"{}\" must be text", key);
            // JSON Schema counts characters (code points), not UTF-8 bytes.
            const auto& text = v.get_string();
            const auto len = static_cast<std::int64_t>(std::count_if(
                text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
            if (const auto* m = prop.if_contains("minLength"); m && m->is_int64() && len < m->get_int64())
                return fmt::format("\"{}\" must be at least {} characters", key, m->get_int64());
            if (const auto* m = prop.if_contains("maxLength"); m && m->is_int64() && len > m->get_int64())
                return fmt::format("\"{}\" must be at most {} characters", key, m->get_int64());
            if (const auto* e = prop.if_contains("enum"); e && e->is_array()) {
                bool found = false;
                for (const auto& x : e->get_array()) found = found || x == v;
                if (!found) return fmt::format("\"{}\" must be one of {}", key, json::serialize(*e));
            }
            // Titled choices (2025-11-25): oneOf [{const, title}, ...].
            if (const auto* one_of = prop.if_contains("oneOf"); one_of && one_of->is_array()) {
                json::array allowed;
                for (const auto& choice : one_of->get_array())
                    if (const auto* c = choice.is_object() ? choice.get_object().if_contains("const") : nullptr)
                        allowed.push_back(*c);
                if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end())
                    return fmt::format("\"{}\" must be one of {}", key, json::serialize(allowed));
            }
        } else if (type == "number" || type == "integer") {
            if (!v.is_number()) return fmt::format("\"{}\" must be a number", key);
            const double d = v.to_number<double>();
            if (type == "integer" && std::floor(d) != d) return fmt::format("\"{}\" must be a whole number", key);
            if (const auto* m = prop.if_contains("minimum"); m && m->is_number() && d < m->to_number<double>())
                return fmt::format("\"{}\" must be at least {}", key, json::serialize(*m));
            if (const auto* m = prop.if_contains("maximum"); m && m->is_number() && d > m->to_number<double>())
                return fmt::format("\"{}\" must be at most {}", key, json::serialize(*m));
        } else if (type == "boolean") {
            if (!v.is_bool()) return fmt::format("\"{}\" must be true or false", key);
        } else if (type == "array") {
            if (!v.is_array()) return fmt::format("\"{}\" must be a list", key);
        }
    }
    return {};
}

std::string file_uri(const std::filesystem::path& p) {
    const auto abs = std::filesystem::absolute(p).lexically_normal().string();
    std::string out = "file://";
    for (unsigned char c : abs) {
        if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~')
            out += static_cast<char>(c);
        else
            out += fmt::format("%{:02X}", c);
    }
    return out;
}

namespace {

struct Sampler {
    ServerRequestOptions options;
    std::optional<std::vector<std::string>> models;  // the endpoint's, fetched once when a hint needs them

    asio::awaitable<std::string> pick_model(const json::object& params) {
        const auto* prefs = params.if_contains("modelPreferences");
        const auto* hints = prefs && prefs->is_object() ? prefs->get_object().if_contains("hints") : nullptr;
        if (!hints || !hints->is_array() || hints->get_array().empty()) co_return std::string();
        if (!models) {
            models.emplace();
            if (auto r = co_await options.llm->models())
                for (auto& m : *r) models->push_back(m.id);
        }
        // A hint is a substring of a model name (the spec's rule); the first hint that matches wins.
        for (const auto& h : hints->get_array()) {
            const auto* o = h.if_object();
            if (!o) continue;
            const auto name = string_at(*o, "name");
            if (name.empty()) continue;
            for (const auto& m : *models)
                if (core::icontains(m, name)) co_return m;
        }
        co_return std::string();
    }

    asio::awaitable<Outcome<json::value>> sample(std::string server, json::value params) {
        const auto* p = params.if_object();
        if (!p) co_return refused("sampling/createMessage: params must be an object");
        bool approved = false;  // stored first: GCC 12 miscompiles `!co_await` in a condition
        if (options.approve_sampling) approved = co_await options.approve_sampling(server, *p);
        if (!approved)
            co_return refused(fmt::format("the user declined the sampling request of server \"{}\"", server));
        llm::ChatRequest request;
        request.messages = sampling_messages(*p);
        request.model = co_await pick_model(*p);
        if (const auto* m = p->if_contains("maxTokens"); m && m->is_number())
            request.extra["max_tokens"] = std::max<std::int64_t>(core::json_integer(*m).value_or(1), 1);
        if (const auto* t = p->if_contains("temperature"); t && t->is_number())
            request.extra["temperature"] = t->to_number<double>();
        if (const auto* s = p->if_contains("stopSequences"); s && s->is_array() && !s->get_array().empty())
            request.extra["stop"] = *s;
        llm::StreamCallbacks quiet;  // not a braced temporary inside the co_await (GCC 12)
        auto r = co_await options.llm->chat(std::move(request), std::move(quiet));
        if (!r) co_return jsonrpc::Error{jsonrpc::code::internal_error, r.error().message, {}, false};
        const auto model = request.model.empty() ? options.llm->settings().model : request.model;
        auto result = sampling_result(*r, model);
        bool send_back = true;  // stored first: GCC 12 miscompiles `!co_await` in a condition
        if (options.approve_sampling_result) send_back = co_await options.approve_sampling_result(server, *p, result);
        if (!send_back)
            co_return refused(fmt::format("the user did not let the model's answer go back to server \"{}\"", server));
        co_return json::value(std::move(result));
    }
};

}  // namespace

json::object roots_result(const std::vector<std::filesystem::path>& dirs) {
    json::array roots;
    for (const auto& d : dirs) {
        const auto abs = std::filesystem::absolute(d).lexically_normal();
        auto name = abs.filename().string();
        if (name.empty()) name = abs.string();
        roots.push_back(json::object{{"uri", file_uri(abs)}, {"name", name}});
    }
    return json::object{{"roots", std::move(roots)}};
}

host::ServerRequestHandlers make_server_request_handlers(ServerRequestOptions options) {
    host::ServerRequestHandlers h;
    if (options.llm) {
        auto sampler = std::make_shared<Sampler>(Sampler{options, std::nullopt});
        h.sampling = [sampler](std::string server, json::value params) -> asio::awaitable<Outcome<json::value>> {
            co_return co_await sampler->sample(std::move(server), std::move(params));
        };
    }
    h.elicitation = [elicit = options.elicit](std::string server,
                                              json::value params) -> asio::awaitable<Outcome<json::value>> {
        const auto* p = params.if_object();
        if (!p) co_return refused("elicitation/create: params must be an object");
        if (!elicit) co_return json::value(json::object{{"action", "decline"}});
        auto answer = co_await elicit(server, *p);
        if (answer.action == ElicitationAnswer::Action::accept) {
            const auto* schema = p->if_contains("requestedSchema");
            if (schema && schema->is_object() && !check_elicitation(schema->get_object(), answer.content).empty())
                co_return json::value(json::object{{"action", "cancel"}});
            json::object r{{"action", "accept"}};
            if (string_at(*p, "mode") != "url") r["content"] = std::move(answer.content);
            co_return json::value(std::move(r));
        }
        co_return json::value(
            json::object{{"action", answer.action == ElicitationAnswer::Action::cancel ? "cancel" : "decline"}});
    };
    if (!options.roots.empty())
        h.roots = [roots = roots_result(options.roots)](std::string,
                                                        json::value) -> asio::awaitable<Outcome<json::value>> {
            co_return json::value(roots);
        };
    return h;
}

}  // namespace switchboard::agent
