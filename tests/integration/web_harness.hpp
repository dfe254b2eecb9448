// Tests of `switchboard serve`'s web API: the real binary with the demo server behind it, a JSONC config in a temp
// directory, raw HTTP requests with the page's own Host and Origin.
#pragma once

#include "agent_harness.hpp"
#include "harness.hpp"
#include "net_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace switchboard::test {

/// Reads a streamed response until `done(body)` holds or it ends, at most `limit` in all (one deadline for the whole
/// wait: a Beast stream closes its socket when a read times out, so short reads in a loop would end the stream).
inline boost::asio::awaitable<bool> read_stream_until(std::shared_ptr<HttpStream> s,
                                                      std::function<bool(const std::string&)> done,
                                                      std::chrono::milliseconds limit) {
    s->stream.expires_after(limit);
    while (!done(s->parser.get().body()) && !s->parser.is_done()) {
        auto [ec, n] =
            co_await boost::beast::http::async_read_some(s->stream, s->buffer, s->parser, core::as_tuple_awaitable);
        if (ec) {
            s->error = ec.message();
            break;
        }
    }
    s->stream.expires_never();
    co_return done(s->parser.get().body());
}

/// Reads until the stream has a whole `event: NAME` (its data line and the blank line after it).
inline boost::asio::awaitable<bool> read_event(std::shared_ptr<HttpStream> s, std::string name,
                                               std::chrono::milliseconds limit) {
    const auto head = "event: " + name + "\n";
    // A named std::function: a converted temporary inside co_await is destroyed twice by GCC 12.
    std::function<bool(const std::string&)> whole = [head](const std::string& body) {
        const auto pos = body.find(head);
        return pos != std::string::npos && body.find("\n\n", pos) != std::string::npos;
    };
    const bool ok = co_await read_stream_until(std::move(s), std::move(whole), limit);
    co_return ok;
}

/// The `data` of each `event: NAME` in an SSE body, in order.
inline std::vector<boost::json::object> sse_events(const std::string& body, const std::string& name) {
    std::vector<boost::json::object> out;
    const std::string head = "event: " + name + "\ndata: ";
    for (auto pos = body.find(head); pos != std::string::npos; pos = body.find(head, pos + 1)) {
        const auto end = body.find("\n\n", pos);
        if (end == std::string::npos) break;
        boost::json::error_code ec;
        auto v = boost::json::parse(body.substr(pos + head.size(), end - pos - head.size()), ec);
        if (!ec && v.is_object()) out.push_back(v.as_object());
    }
    return out;
}

class WebHarness : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ =
            std::filesystem::temp_directory_path() / ("switchboard-webapi-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
        config_ = (dir_ / "config.json").string();
        write_config("");
    }
    /// A JSONC config with a comment, the demo server, and `top` (more top-level members, e.g. an llm object) and
    /// `servers` (more entries, each followed by a comma).
    void write_config(const std::string& top, const std::string& servers = {}) {
        std::ofstream(config_) << "{\n  // kept through every edit\n"
                               << top << "  \"mcpServers\": {\n    " << servers << "\"demo\": "
                               << "{\"command\": \"" << demo_server() << "\"}\n  }\n}\n";
    }
    void TearDown() override {
        gateway_.reset();
        std::filesystem::remove_all(dir_);
    }
    void start(std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"--config", config_,  "--db", (dir_ / "conversations.db").string(),
                                      "serve",    "--port", "0",    "--quiet"};
        args.insert(args.end(), extra.begin(), extra.end());
        gateway_ = start_listening(SWITCHBOARD_CLI, args);
        ASSERT_TRUE(gateway_);
    }
    /// The same from the test's directory (its .switchboard/agents are found there), forks published under it.
    void start_in_test_dir() {
        const auto d = dir_.string();
        gateway_ = start_listening(
            "/bin/sh", {"-c", "cd '" + d + "' && XDG_RUNTIME_DIR='" + d + "' exec " + SWITCHBOARD_CLI + " --config '" +
                                  config_ + "' --db '" + d + "/conversations.db' serve --port 0 --quiet"});
        ASSERT_TRUE(gateway_);
    }
    std::string host() const { return "127.0.0.1:" + std::to_string(gateway_->port); }

    HttpResult request(const std::string& method, const std::string& target, Headers headers,
                       const std::string& body = {}) {
        headers.emplace_back("Host", host());
        HttpResult out;
        const auto port = gateway_->port;
        run([&out, port, method, target, headers, body]() -> boost::asio::awaitable<void> {
            out = co_await http_exchange(port, method, target, headers, body);
        });
        return out;
    }
    HttpResult get(const std::string& target) { return request("GET", target, {}); }
    HttpResult post(const std::string& target, const boost::json::object& body) {
        return request("POST", target, {{"Content-Type", "application/json"}, {"Origin", "http://" + host()}},
                       boost::json::serialize(body));
    }
    static boost::json::value parse(const HttpResult& r) {
        boost::json::error_code ec;
        auto v = boost::json::parse(r.body, ec);
        EXPECT_FALSE(ec) << r.status << " " << r.body;
        return v;
    }
    // The server's status from /api/servers once `phase` is reached (null after 15 s).
    boost::json::value wait_for_phase(const std::string& server, const std::string& phase) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        boost::json::value last;
        while (std::chrono::steady_clock::now() < until) {
            auto v = parse(get("/api/servers"));
            for (const auto& s : v.at("servers").as_array())
                if (s.at("name").as_string() == server) {
                    last = s;
                    if (s.at("phase").as_string() == phase) return s;
                }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        ADD_FAILURE() << server << " never reached " << phase << "; last: " << boost::json::serialize(last);
        return nullptr;
    }
    /// Starts the gateway with `fake` as the model (and `servers`, as write_config takes them).
    void start_with(const FakeLlm& fake, const std::string& servers = {}) {
        write_config("  \"llm\": {\"baseUrl\": \"" + fake.url() + "\", \"model\": \"test-model\"},\n", servers);
        start();
        wait_for_phase("demo", "connected");
    }
    /// A state-changing request's headers, from the page's own origin.
    Headers post_headers() {
        return {{"Host", host()}, {"Content-Type", "application/json"}, {"Origin", "http://" + host()}};
    }
    std::string config_text() const {
        std::ifstream in(config_);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }

    std::filesystem::path dir_;
    std::string config_;
    std::unique_ptr<ListeningServer> gateway_;
};

}  // namespace switchboard::test
