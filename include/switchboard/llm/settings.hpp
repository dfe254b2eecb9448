// Which model to talk to and how: the top-level `llm` object of the config file, then flags, then the environment.
//
//   "llm": {"baseUrl": "http://127.0.0.1:8080/v1", "model": "qwen3", "apiKey": "${OPENAI_API_KEY}",
//           "headers": {...}, "temperature": 0.2, "maxTokens": 4096, "contextWindow": 32768, "timeoutMs": 120000,
//           "vision": false, "stream": true}
//
// `${VAR}` expansion has already been applied by the config parser (host/config.hpp keeps the object raw, because the
// host layer does not know this one).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <boost/json/object.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::llm {

struct Settings {
    std::string base_url;  ///< up to and including /v1: requests go to {base_url}/chat/completions
    std::string model;
    std::string api_key;   ///< sent as "Authorization: Bearer ..."; never logged, never in errors
    std::map<std::string, std::string> headers;
    std::optional<double> temperature;
    std::optional<std::int64_t> max_tokens;
    std::optional<std::int64_t> context_window;
    std::chrono::milliseconds timeout{300'000};        ///< idle time between received bytes of a response
    std::chrono::milliseconds connect_timeout{10'000};  ///< resolve + connect + TLS
    bool vision = false;   ///< the model takes image parts (tool results, attachments)
    bool stream = true;    ///< false: the non-streamed fallback
    int max_retries = 4;   ///< on 429/5xx and connection failures before any byte
    std::chrono::milliseconds max_retry_delay{30'000};

    bool configured() const { return !base_url.empty() && !model.empty(); }
};

/// Parses the config's `llm` object. Unknown keys and wrong types become `warnings` ("llm: unknown key ...");
/// a value of the wrong type is ignored.
Settings parse_settings(const boost::json::object& obj, std::string_view source, std::vector<std::string>& warnings);

/// Fills what the config left empty from OPENAI_BASE_URL and OPENAI_API_KEY.
void apply_environment(Settings& s, const std::function<std::optional<std::string>(std::string_view)>& env);

/// What `chat` and `run` print when no model is configured: how to point at llama-server or Ollama.
std::string not_configured_help(const Settings& s);

}  // namespace switchboard::llm
