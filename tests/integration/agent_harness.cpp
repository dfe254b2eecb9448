#include "agent_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <fstream>

namespace switchboard::test {

namespace json = boost::json;

FakeLlm::FakeLlm(const std::filesystem::path& dir, const std::string& script) {
    const auto file = dir / "llm-script.json";
    std::ofstream(file) << script;
    server_ = start_listening(FAKE_LLM, {file.string()});
}

llm::Settings FakeLlm::settings() const {
    llm::Settings s;
    s.base_url = url();
    s.model = "test-model";
    s.max_retry_delay = std::chrono::milliseconds(2000);
    return s;
}

namespace {
boost::asio::awaitable<json::array> get_array(std::uint16_t port, std::string path) {
    auto r = co_await http_exchange(port, "GET", std::move(path), {}, "");
    json::error_code ec;
    auto v = json::parse(r.body, ec);
    if (ec || !v.is_array()) co_return json::array{};
    co_return v.as_array();
}
}  // namespace

boost::asio::awaitable<json::array> FakeLlm::request_bodies() {
    json::array out;
    if (!server_) co_return out;
    for (auto& r : co_await get_array(server_->port, "/_requests")) {
        const auto* o = r.if_object();
        if (!o || !o->contains("body")) continue;
        const auto& body = o->at("body");
        if (o->contains("path") && o->at("path").is_string() &&
            o->at("path").get_string().find("chat/completions") == json::string::npos)
            continue;
        if (body.is_string()) {
            json::error_code ec;
            auto parsed = json::parse(body.get_string(), ec);
            out.push_back(ec ? json::value(json::object{}) : parsed);
        } else {
            out.push_back(body);
        }
    }
    co_return out;
}

boost::asio::awaitable<json::array> FakeLlm::events() {
    if (!server_) co_return json::array{};
    co_return co_await get_array(server_->port, "/_events");
}

std::string tool_call(const std::string& name, const std::string& arguments) {
    return R"({"name": )" + q(name) + R"(, "arguments": )" + q(arguments) + "}";
}

std::vector<std::string> offered_tools(const json::object& body) {
    std::vector<std::string> out;
    if (const auto* tools = body.if_contains("tools"); tools && tools->is_array())
        for (const auto& t : tools->get_array())
            out.push_back(std::string(t.at("function").at("name").as_string()));
    return out;
}

std::string text_of(const json::value& v) {
    if (const auto* s = v.if_string()) return std::string(*s);
    return json::serialize(v);
}

bool has(const std::vector<std::string>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::string message_text(const json::value& message) {
    const auto& content = message.at("content");
    if (content.is_string()) return std::string(content.get_string());
    std::string out;
    if (content.is_array())
        for (const auto& p : content.get_array())
            if (p.at("type") == "text") out += std::string(p.at("text").as_string()) + "\n";
    return out;
}

}  // namespace switchboard::test
