#include <switchboard/llm/stream_assembler.hpp>

#include <switchboard/core/json_number.hpp>
#include <switchboard/core/text.hpp>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <climits>

namespace switchboard::llm {

namespace json = boost::json;

namespace {

std::optional<std::int64_t> integer(const json::value* v) {
    if (!v) return std::nullopt;
    return core::json_integer(*v);
}

// A token count: never negative.
std::int64_t count(const json::value* v) { return std::max<std::int64_t>(integer(v).value_or(0), 0); }

std::string_view string_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

// {"error": {"message": ...}} or {"error": "..."}: the endpoint's words, shortened. vLLM before 0.10.1 sent
// {"object": "error", "message": ...} (and [DONE] after it, so it must not pass for an empty chunk).
std::optional<std::string> error_of(const json::object& o) {
    if (string_at(o, "object") == "error") {
        auto m = string_at(o, "message");
        return core::shorten(m.empty() ? std::string_view("error") : m, 300);
    }
    const auto* e = o.if_contains("error");
    if (!e || e->is_null()) return std::nullopt;
    if (e->is_string()) return core::shorten(e->get_string(), 300);
    if (e->is_object())
        if (auto m = string_at(e->get_object(), "message"); !m.empty()) return core::shorten(m, 300);
    return core::shorten(json::serialize(*e), 300);
}

}  // namespace

StreamAssembler::PartialCall& StreamAssembler::call_at(int index) {
    for (auto& c : calls_)
        if (c.index == index) return c;
    calls_.push_back(PartialCall{index, {}, false});
    return calls_.back();
}

void StreamAssembler::add_delta_tool_calls(const json::array& calls) {
    for (const auto& item : calls) {
        const auto* o = item.if_object();
        if (!o) continue;
        const auto* fn_value = o->if_contains("function");
        const json::object* fn = fn_value ? fn_value->if_object() : nullptr;
        const auto name = fn ? string_at(*fn, "name") : std::string_view();
        const auto id = string_at(*o, "id");

        PartialCall* p = nullptr;
        auto index = integer(o->if_contains("index"));
        if (index && (*index < 0 || *index > INT_MAX)) index.reset();  // nonsense: as if it had none
        if (index) {
            p = &call_at(static_cast<int>(*index));
        } else if (name.empty() && id.empty() && !calls_.empty()) {
            p = &calls_.back();  // a fragment without index or name continues the last call
        } else {
            // Older Ollama: a whole call per entry and no index; each is a new call.
            int next = next_unindexed_;
            for (const auto& c : calls_) next = std::max(next, c.index + 1);
            next_unindexed_ = next + 1;
            p = &call_at(next);
        }
        if (!id.empty() && p->call.id.empty()) p->call.id = std::string(id);
        if (auto type = string_at(*o, "type"); !type.empty()) p->call.type = std::string(type);
        if (!name.empty() && p->call.name.empty()) p->call.name = std::string(name);
        if (fn) {
            if (const auto* args = fn->if_contains("arguments")) {
                if (args->is_string())
                    p->call.arguments += args->get_string();
                else if (!args->is_null())
                    p->call.arguments += json::serialize(*args);  // Ollama may send an object
            }
        }
        started_ = true;
        if (!p->announced && !p->call.name.empty()) {
            p->announced = true;
            if (callbacks_.on_tool_call) {
                auto announced = p->call;
                if (announced.id.empty()) announced.id = fmt::format("call_{}", p->index);
                callbacks_.on_tool_call(announced);
            }
        }
    }
}

std::optional<std::string> StreamAssembler::add_chunk(const json::object& chunk) {
    if (auto e = error_of(chunk)) return e;
    if (const auto* u = chunk.if_contains("usage"); u && u->is_object()) {
        const auto& uo = u->get_object();
        usage_ = Usage{count(uo.if_contains("prompt_tokens")), count(uo.if_contains("completion_tokens"))};
        usage_from_timings_ = false;
    } else if (const auto* t = chunk.if_contains("timings"); t && t->is_object() && (!usage_ || usage_from_timings_)) {
        // llama-server's own counters, when it sent no usage; with timings_per_token they come on every chunk and
        // the last ones count.
        const auto& to = t->get_object();
        if (auto n = integer(to.if_contains("predicted_n"))) {
            usage_ = Usage{count(to.if_contains("prompt_n")), std::max<std::int64_t>(*n, 0)};
            usage_from_timings_ = true;
        }
    }
    const auto* choices = chunk.if_contains("choices");
    if (!choices || !choices->is_array()) return std::nullopt;  // the usage chunk may have no choices at all
    for (const auto& c : choices->get_array()) {
        const auto* co = c.if_object();
        if (!co) continue;
        if (auto i = integer(co->if_contains("index")); i && *i != 0) continue;  // n > 1 is never asked for
        const auto* d = co->if_contains("delta");
        if (!d) d = co->if_contains("message");  // some servers end a stream with a whole message
        if (d && d->is_object()) {
            const auto& delta = d->get_object();
            // OpenAI streams a refusal in `refusal` with content null: it is the answer the user must see.
            for (std::string_view key : {"content", "refusal"}) {
                if (auto text = string_at(delta, key); !text.empty()) {
                    content_ += text;
                    started_ = true;
                    if (callbacks_.on_content) callbacks_.on_content(text);
                }
            }
            for (std::string_view key : {"reasoning_content", "reasoning"}) {
                if (auto text = string_at(delta, key); !text.empty()) {
                    reasoning_ += text;
                    started_ = true;
                    if (callbacks_.on_reasoning) callbacks_.on_reasoning(text);
                    break;  // a server sending both means the same text
                }
            }
            if (const auto* calls = delta.if_contains("tool_calls"); calls && calls->is_array())
                add_delta_tool_calls(calls->get_array());
        }
        if (auto reason = string_at(*co, "finish_reason"); !reason.empty()) finish_reason_ = std::string(reason);
    }
    return std::nullopt;
}

std::optional<std::string> StreamAssembler::add_response(const json::object& response) {
    if (auto e = error_of(response)) return e;
    const auto* choices = response.if_contains("choices");
    if (!choices || !choices->is_array() || choices->get_array().empty())
        return fmt::format("not a chat completion: {}", core::shorten(json::serialize(response), 300));
    return add_chunk(response);
}

Message StreamAssembler::message() const {
    Message m;
    m.role = Role::assistant;
    if (!content_.empty()) m.content.push_back(MessagePart::make_text(content_));
    m.reasoning = reasoning_;
    auto calls = calls_;
    std::stable_sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    for (auto& c : calls) {
        if (c.call.id.empty()) c.call.id = fmt::format("call_{}", c.index);
        m.tool_calls.push_back(std::move(c.call));
    }
    m.usage = usage_;
    return m;
}

}  // namespace switchboard::llm
