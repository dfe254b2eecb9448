// The chunks each server family sends, as close to the real wire format as a test needs:
//   openai   - role chunk with content "", content pieces, a tool call's id and name with arguments "" then argument
//              fragments carrying only `index`, finish_reason "tool_calls", a usage chunk with empty choices.
//   llamacpp - llama-server --jinja: content null in the role chunk, `reasoning_content` deltas, the same tool call
//              deltas, and `timings` beside the usage.
//   ollama   - the older OpenAI layer: `reasoning` deltas, every tool call whole in one delta without `index`,
//              finish_reason "stop" even for a tool turn.
//   vllm     - `reasoning_content`, the tool call's id and name first (no `arguments`), later deltas without id;
//              "noToolCallIds": no id ever.
#include "fake_llm.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

namespace fake_llm {

namespace json = boost::json;

namespace {

std::string str(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

bool flag(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_bool() && v->get_bool();
}

// Text in pieces of a few bytes, as a model streams tokens.
std::vector<std::string> pieces(const std::string& text, std::size_t size) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < text.size(); i += size) out.push_back(text.substr(i, size));
    return out;
}

struct Call {
    std::string id, name, arguments;
};

class Builder {
public:
    Builder(const json::object& response, const json::object& request, int sequence)
        : r_(response), dialect_(str(response, "dialect").empty() ? "openai" : str(response, "dialect")) {
        model_ = str(request, "model");
        id_ =
            dialect_ == "llamacpp" ? fmt::format("chatcmpl-Xq{:030d}", sequence) : fmt::format("chatcmpl-{}", sequence);
        if (const auto* so = request.if_contains("stream_options"); so && so->is_object())
            include_usage_ = flag(so->get_object(), "include_usage");
        if (const auto* calls = r_.if_contains("toolCalls"); calls && calls->is_array()) {
            int i = 0;
            for (const auto& c : calls->get_array()) {
                const auto& o = c.as_object();
                Call call{str(o, "id"), str(o, "name"), str(o, "arguments")};
                if (const auto* a = o.if_contains("arguments"); a && a->is_object())
                    call.arguments = json::serialize(*a);
                if (call.id.empty()) {
                    call.id = dialect_ == "vllm"       ? fmt::format("chatcmpl-tool-{:08x}", 0xa11ce + i)
                              : dialect_ == "llamacpp" ? fmt::format("Ab{:030d}", i)
                                                       : fmt::format("call_{}{}", sequence, i);
                }
                calls_.push_back(std::move(call));
                ++i;
            }
        }
    }

    Answer build() {
        Answer a;
        a.body = whole();
        role_chunk();
        if (auto reasoning = str(r_, "reasoning"); !reasoning.empty() && dialect_ != "openai") {
            const char* key = dialect_ == "ollama" ? "reasoning" : "reasoning_content";
            for (auto& p : pieces(reasoning, 5)) {
                json::object d;
                if (dialect_ == "ollama") d = {{"role", "assistant"}, {"content", ""}};
                d[key] = p;
                delta(std::move(d));
            }
        }
        for (auto& p : pieces(str(r_, "content"), 4)) {
            json::object d{{"content", p}};
            if (dialect_ == "ollama") d["role"] = "assistant";
            delta(std::move(d));
            if (const auto* e = r_.if_contains("errorMidStream"); e && !error_sent_) {
                error_sent_ = true;  // after the first piece: the client has shown something
                json::object err{{"error", *e}};
                events_.push_back(json::serialize(err));
            }
        }
        tool_calls();
        finish();
        events_.push_back("[DONE]");
        a.events = std::move(events_);
        return a;
    }

private:
    json::object chunk(json::object choice) {
        json::object c{{"id", id_}, {"object", "chat.completion.chunk"}, {"created", 1750000000}, {"model", model_}};
        if (dialect_ == "openai") c["system_fingerprint"] = "fp_fake";
        if (dialect_ == "ollama") c["system_fingerprint"] = "fp_ollama";
        if (dialect_ == "llamacpp") c["system_fingerprint"] = "b6000-fake";
        choice["index"] = 0;
        if (dialect_ == "openai" || dialect_ == "vllm") choice["logprobs"] = nullptr;
        json::array choices;
        choices.push_back(std::move(choice));
        c["choices"] = std::move(choices);
        if (dialect_ == "openai") c["usage"] = nullptr;
        return c;
    }

    void delta(json::object d, json::value finish_reason = nullptr) {
        json::object choice{{"delta", std::move(d)}, {"finish_reason", finish_reason}};
        events_.push_back(json::serialize(chunk(std::move(choice))));
    }

    void role_chunk() {
        json::object d{{"role", "assistant"}};
        if (dialect_ == "llamacpp")
            d["content"] = nullptr;
        else if (dialect_ != "ollama")
            d["content"] = "";
        if (dialect_ == "openai") d["refusal"] = nullptr;
        if (dialect_ != "ollama") delta(std::move(d));  // Ollama's first chunk already carries content
    }

    void tool_calls() {
        if (calls_.empty()) return;
        if (dialect_ == "ollama") {
            json::array all;
            for (auto& c : calls_) {
                json::value args(c.arguments);
                if (flag(r_, "argumentsAsObject")) args = json::parse(c.arguments.empty() ? "{}" : c.arguments);
                all.push_back(json::object{
                    {"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", args}}}});
            }
            delta(json::object{{"role", "assistant"}, {"content", ""}, {"tool_calls", std::move(all)}});
            return;
        }
        const bool ids = !(dialect_ == "vllm" && flag(r_, "noToolCallIds"));
        for (std::size_t i = 0; i < calls_.size(); ++i) {
            const auto& c = calls_[i];
            json::object function{{"name", c.name}};
            if (dialect_ != "vllm") function["arguments"] = "";
            json::object first{{"index", i}, {"type", "function"}, {"function", std::move(function)}};
            if (ids) first["id"] = c.id;
            delta(json::object{{"tool_calls", json::array{std::move(first)}}});
            for (auto& p : pieces(c.arguments, 7)) {
                json::object frag{{"index", i}, {"function", {{"arguments", p}}}};
                delta(json::object{{"tool_calls", json::array{std::move(frag)}}});
            }
        }
    }

    std::string finish_reason() const {
        if (auto f = str(r_, "finishReason"); !f.empty()) return f;
        if (calls_.empty() || dialect_ == "ollama") return "stop";
        return "tool_calls";
    }

    json::object usage() const {
        if (const auto* u = r_.if_contains("usage"); u && u->is_object()) return u->get_object();
        return {{"prompt_tokens", 12}, {"completion_tokens", 5}, {"total_tokens", 17}};
    }

    void finish() {
        json::object last{{"delta", json::object{}}, {"finish_reason", finish_reason()}};
        if (dialect_ == "ollama") last["delta"] = {{"role", "assistant"}, {"content", ""}};
        if (dialect_ == "vllm") last["stop_reason"] = nullptr;
        events_.push_back(json::serialize(chunk(std::move(last))));
        if (!include_usage_) return;
        json::object u{{"id", id_},       {"object", "chat.completion.chunk"}, {"created", 1750000000},
                       {"model", model_}, {"choices", json::array{}},          {"usage", usage()}};
        if (dialect_ == "llamacpp")
            u["timings"] = {{"prompt_n", 12}, {"prompt_ms", 3.5}, {"predicted_n", 5}, {"predicted_ms", 20.1}};
        events_.push_back(json::serialize(u));
    }

    std::string whole() const {
        json::object message{{"role", "assistant"}, {"content", str(r_, "content")}};
        if (auto reasoning = str(r_, "reasoning"); !reasoning.empty())
            message[dialect_ == "ollama" ? "reasoning" : "reasoning_content"] = reasoning;
        if (!calls_.empty()) {
            json::array calls;
            for (const auto& c : calls_)
                calls.push_back(json::object{
                    {"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
            message["tool_calls"] = std::move(calls);
            if (str(r_, "content").empty()) message["content"] = nullptr;
        }
        json::object choice{{"index", 0}, {"message", std::move(message)}, {"finish_reason", finish_reason()}};
        json::object o{{"id", id_},
                       {"object", "chat.completion"},
                       {"created", 1750000000},
                       {"model", model_},
                       {"choices", json::array{std::move(choice)}},
                       {"usage", usage()}};
        return json::serialize(o);
    }

    const json::object& r_;
    std::string dialect_, model_, id_;
    bool include_usage_ = false, error_sent_ = false;
    std::vector<Call> calls_;
    std::vector<std::string> events_;
};

}  // namespace

Answer make_answer(const json::object& response, const json::object& request, int sequence) {
    return Builder(response, request, sequence).build();
}

}  // namespace fake_llm
