#include <switchboard/llm/settings.hpp>

#include <switchboard/core/json_number.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace switchboard::llm {

namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 13> known_keys = {
    "baseUrl",          "model",  "apiKey", "headers",    "temperature",    "maxTokens", "contextWindow", "timeoutMs",
    "connectTimeoutMs", "vision", "stream", "maxRetries", "maxRetryDelayMs"};

// Optimal string alignment distance, case-insensitive ("baseURL" is one letter from "baseUrl").
std::size_t edit_distance(std::string_view a, std::string_view b) {
    auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); };
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

std::string suggestion(std::string_view key) {
    // Common spellings from other tools that are more than a typo away.
    if (key == "base_url" || key == "url" || key == "endpoint") return " (did you mean \"baseUrl\"?)";
    if (key == "api_key" || key == "key") return " (did you mean \"apiKey\"?)";
    if (key == "max_tokens") return " (did you mean \"maxTokens\"?)";
    std::string_view best;
    std::size_t best_distance = 3;
    for (auto candidate : known_keys) {
        const auto distance = edit_distance(key, candidate);
        if (distance < best_distance && distance < key.size()) {
            best = candidate;
            best_distance = distance;
        }
    }
    return best.empty() ? std::string() : fmt::format(" (did you mean \"{}\"?)", best);
}

const char* kind_name(const json::value& v) {
    switch (v.kind()) {
    case json::kind::string: return "a string";
    case json::kind::bool_: return "a boolean";
    case json::kind::object: return "an object";
    case json::kind::array: return "an array";
    case json::kind::null: return "null";
    default: return "a number";
    }
}

std::optional<std::int64_t> as_integer(const json::value& v) {
    return core::json_exact_integer(v);
}

}  // namespace

Settings parse_settings(const json::object& obj, std::string_view source, std::vector<std::string>& warnings) {
    Settings s;
    auto wrong = [&](std::string_view key, const json::value& v, std::string_view expected) {
        warnings.push_back(fmt::format("{}: llm.{} must be {}, got {}; ignored", source, key, expected, kind_name(v)));
    };
    auto text = [&](std::string_view key, const json::value& v, std::string& out) {
        if (v.is_string())
            out = std::string(v.get_string());
        else
            wrong(key, v, "a string");
    };
    auto integer = [&](std::string_view key, const json::value& v, std::int64_t min) -> std::optional<std::int64_t> {
        auto n = as_integer(v);
        if (!n || *n < min) {
            wrong(key, v, min > 0 ? "a positive integer" : "a non-negative integer");
            return std::nullopt;
        }
        return n;
    };
    auto flag = [&](std::string_view key, const json::value& v, bool& out) {
        if (v.is_bool())
            out = v.get_bool();
        else
            wrong(key, v, "true or false");
    };

    for (const auto& item : obj) {
        const std::string_view key = item.key();
        const auto& v = item.value();
        if (key == "baseUrl") {
            text(key, v, s.base_url);
            while (!s.base_url.empty() && s.base_url.back() == '/') s.base_url.pop_back();
        } else if (key == "model") {
            text(key, v, s.model);
        } else if (key == "apiKey") {
            text(key, v, s.api_key);
        } else if (key == "headers") {
            if (!v.is_object()) {
                wrong(key, v, "an object of strings");
                continue;
            }
            for (const auto& h : v.get_object()) {
                if (h.value().is_string())
                    s.headers[std::string(h.key())] = std::string(h.value().get_string());
                else
                    warnings.push_back(fmt::format("{}: llm.headers.{} must be a string, got {}; ignored", source,
                                                   std::string_view(h.key()), kind_name(h.value())));
            }
        } else if (key == "temperature") {
            if (v.is_number())
                s.temperature = v.to_number<double>();
            else
                wrong(key, v, "a number");
        } else if (key == "maxTokens") {
            s.max_tokens = integer(key, v, 1);
        } else if (key == "contextWindow") {
            s.context_window = integer(key, v, 1);
        } else if (key == "timeoutMs") {
            if (auto n = integer(key, v, 1)) s.timeout = std::chrono::milliseconds(*n);
        } else if (key == "connectTimeoutMs") {
            if (auto n = integer(key, v, 1)) s.connect_timeout = std::chrono::milliseconds(*n);
        } else if (key == "vision") {
            flag(key, v, s.vision);
        } else if (key == "stream") {
            flag(key, v, s.stream);
        } else if (key == "maxRetries") {
            if (auto n = integer(key, v, 0)) s.max_retries = static_cast<int>(std::min<std::int64_t>(*n, 100));
        } else if (key == "maxRetryDelayMs") {
            if (auto n = integer(key, v, 0)) s.max_retry_delay = std::chrono::milliseconds(*n);
        } else {
            warnings.push_back(fmt::format("{}: llm: unknown key \"{}\"{}; ignored", source, key, suggestion(key)));
        }
    }
    return s;
}

void apply_environment(Settings& s, const std::function<std::optional<std::string>(std::string_view)>& env) {
    if (s.base_url.empty())
        if (auto v = env("OPENAI_BASE_URL"); v && !v->empty()) {
            s.base_url = *v;
            while (!s.base_url.empty() && s.base_url.back() == '/') s.base_url.pop_back();
        }
    if (s.api_key.empty())
        if (auto v = env("OPENAI_API_KEY"); v && !v->empty()) s.api_key = *v;
}

std::string not_configured_help(const Settings& s) {
    std::string missing;
    if (s.base_url.empty() && s.model.empty())
        missing = "No model is configured (no base URL and no model name).";
    else if (s.base_url.empty())
        missing = fmt::format("No base URL is configured for model \"{}\".", s.model);
    else
        missing = fmt::format("No model name is configured for {}.", s.base_url);
    return missing + R"(
Switchboard talks to any OpenAI-compatible endpoint. For a local model:
  llama-server:  llama-server --jinja -m model.gguf        -> http://127.0.0.1:8080/v1
  Ollama:        ollama serve (then ollama pull NAME)      -> http://127.0.0.1:11434/v1
Then point Switchboard at it in one of these ways:
  - the config file's "llm" object:
      "llm": {"baseUrl": "http://127.0.0.1:8080/v1", "model": "NAME"}
  - flags: --llm http://127.0.0.1:11434/v1 --model NAME
  - the environment: OPENAI_BASE_URL=http://127.0.0.1:8080/v1 (with --model NAME or "model" in the config;
    OPENAI_API_KEY is sent as a bearer token when the endpoint needs one)
)";
}

}  // namespace switchboard::llm
