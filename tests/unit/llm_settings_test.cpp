// The config's `llm` object, the environment, the help text, and Retry-After.
#include <switchboard/llm/client.hpp>
#include <switchboard/llm/settings.hpp>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

namespace switchboard::llm {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

TEST(LlmSettings, ParsesEveryKey) {
    std::vector<std::string> warnings;
    auto s = parse_settings(json::parse(R"({"baseUrl":"http://127.0.0.1:8080/v1/","model":"qwen3","apiKey":"sk-1",
        "headers":{"X-Org":"o"},"temperature":0.2,"maxTokens":4096,"contextWindow":32768,"timeoutMs":1000,
        "connectTimeoutMs":500,"vision":true,"stream":false,"maxRetries":2})")
                                .as_object(),
                            "cfg.json", warnings);
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    EXPECT_EQ(s.base_url, "http://127.0.0.1:8080/v1");
    EXPECT_EQ(s.model, "qwen3");
    EXPECT_EQ(s.api_key, "sk-1");
    EXPECT_EQ(s.headers.at("X-Org"), "o");
    EXPECT_EQ(s.temperature, 0.2);
    EXPECT_EQ(s.max_tokens, 4096);
    EXPECT_EQ(s.context_window, 32768);
    EXPECT_EQ(s.timeout, milliseconds(1000));
    EXPECT_EQ(s.connect_timeout, milliseconds(500));
    EXPECT_TRUE(s.vision);
    EXPECT_FALSE(s.stream);
    EXPECT_EQ(s.max_retries, 2);
    EXPECT_TRUE(s.configured());
}

TEST(LlmSettings, WarnsAboutUnknownKeysAndWrongTypes) {
    std::vector<std::string> warnings;
    auto s = parse_settings(
        json::parse(R"({"baseURL":"x","model":3,"maxTokens":-1,"stream":"yes","api_key":"k"})").as_object(), "cfg.json",
        warnings);
    ASSERT_EQ(warnings.size(), 5u);
    EXPECT_NE(warnings[0].find("unknown key \"baseURL\" (did you mean \"baseUrl\"?)"), std::string::npos)
        << warnings[0];
    EXPECT_NE(warnings[1].find("llm.model must be a string, got a number"), std::string::npos) << warnings[1];
    EXPECT_NE(warnings[2].find("maxTokens"), std::string::npos);
    EXPECT_NE(warnings[3].find("stream"), std::string::npos);
    EXPECT_NE(warnings[4].find("did you mean \"apiKey\""), std::string::npos) << warnings[4];
    EXPECT_TRUE(s.model.empty());
    EXPECT_TRUE(s.stream);
    EXPECT_FALSE(s.configured());
}

TEST(LlmSettings, EnvironmentFillsOnlyWhatIsEmpty) {
    auto env = [](std::string_view name) -> std::optional<std::string> {
        if (name == "OPENAI_BASE_URL") return "http://127.0.0.1:11434/v1/";
        if (name == "OPENAI_API_KEY") return "sk-env";
        return std::nullopt;
    };
    Settings s;
    apply_environment(s, env);
    EXPECT_EQ(s.base_url, "http://127.0.0.1:11434/v1");
    EXPECT_EQ(s.api_key, "sk-env");
    Settings t;
    t.base_url = "http://x/v1";
    t.api_key = "mine";
    apply_environment(t, env);
    EXPECT_EQ(t.base_url, "http://x/v1");
    EXPECT_EQ(t.api_key, "mine");
}

TEST(LlmSettings, HelpSaysHowToPointAtALocalModel) {
    auto help = not_configured_help(Settings{});
    for (const char* needle :
         {"http://127.0.0.1:8080/v1", "http://127.0.0.1:11434/v1", "\"llm\"", "--llm", "--model", "OPENAI_BASE_URL"})
        EXPECT_NE(help.find(needle), std::string::npos) << needle;
}

TEST(LlmRetry, RetryAfterInSecondsOrAsAnHttpDate) {
    const auto now = std::chrono::system_clock::from_time_t(1445412480);  // Wed, 21 Oct 2015 07:28:00 GMT
    EXPECT_EQ(parse_retry_after("1", now), milliseconds(1000));
    EXPECT_EQ(parse_retry_after(" 120 ", now), milliseconds(120'000));
    EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:05 GMT", now), milliseconds(5000));
    EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now), milliseconds(0));
    EXPECT_FALSE(parse_retry_after("soon", now));
    EXPECT_FALSE(parse_retry_after("", now));
    EXPECT_EQ(retry_delay(0, milliseconds(60'000), milliseconds(30'000)), milliseconds(30'000));
    EXPECT_LE(retry_delay(5, std::nullopt, milliseconds(2000)), milliseconds(2000));
    EXPECT_TRUE(retryable_status(429));
    EXPECT_TRUE(retryable_status(503));
    EXPECT_FALSE(retryable_status(501));
    EXPECT_FALSE(retryable_status(401));
}

}  // namespace
}  // namespace switchboard::llm
