// OAuth end to end, every part real: a local authorization server written for these tests
// (tests/peers/test_auth_server: PKCE, single-use codes, rotating refresh tokens, RS256 JWTs, a JWKS), the gateway as
// the protected MCP server (`switchboard serve --auth oauth`, the demo server behind it), and the CLI as the client
// (`switchboard status`, `switchboard auth login` with the test server as the browser).
#include "harness.hpp"
#include "net_harness.hpp"

#include <switchboard/auth/dpop.hpp>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace switchboard::test;
using boost::asio::awaitable;

namespace {

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

class OAuth : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-oauth-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        tokens_ = dir_ / "state" / "oauth-tokens.json";
    }
    void TearDown() override {
        gateway_.reset();
        as_.reset();
        fs::remove_all(dir_);
    }

    void start_auth_server(std::vector<std::string> args = {}) {
        as_ = start_listening(TEST_AUTH_SERVER, args);
        ASSERT_TRUE(as_);
    }

    // The gateway on a port chosen up front: its audience (resource URL) names it.
    void start_gateway(const std::string& demo_args = "") {
        const auto port = free_port();
        audience_ = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
        gateway_config_ = (dir_ / "gateway.json").string();
        std::ofstream(gateway_config_) << R"({"mcpServers": {"demo": {"command": ")" << demo_server() << R"(",
            "args": [)" << demo_args << R"(]}},
            "gateway": {"scopes": {"mcp:tools": ["*"], "echo:only": ["echo"]}}})";
        gateway_ = start_listening(
            SWITCHBOARD_CLI, {"--config", gateway_config_, "serve", "--port", std::to_string(port), "--auth", "oauth",
                              "--issuer", as_->url, "--audience", audience_, "--clock-skew", "0"});
        ASSERT_TRUE(gateway_);
        client_config_ = (dir_ / "client.json").string();
        std::ofstream(client_config_) << R"({"mcpServers": {"remote": {"url": ")" << audience_ << R"("}}})";
    }

    // The CLI as a user runs it, with the token file in the test's directory and the test server as the browser.
    int cli(const std::string& args, std::string& out) {
        const auto cmd = "SWITCHBOARD_TOKEN_FILE=" + tokens_.string() + " BROWSER='" + std::string(TEST_AUTH_SERVER) +
                         " --browse' " + SWITCHBOARD_CLI + " --config " + client_config_ + " " + args + " 2>&1";
        return run_command(cmd, out);
    }

    HttpResult post(std::uint16_t port, const std::string& target, std::string body, Headers headers) {
        HttpResult r;
        run([&r, port, target, body, headers]() -> awaitable<void> {
            r = co_await http_exchange(port, "POST", target, headers, body);
        });
        return r;
    }
    HttpResult get(std::uint16_t port, const std::string& target) {
        HttpResult r;
        const Headers none;
        run([&r, port, target, none]() -> awaitable<void> {
            r = co_await http_exchange(port, "GET", target, none, "");
        });
        return r;
    }

    // A token minted by the authorization server: {"aud", "expiresIn", "scope", "badSignature", "issuer"}.
    std::string mint(const std::string& spec) {
        auto r = post(as_->port, "/admin/mint", spec, post_headers());
        EXPECT_EQ(r.status, 200) << r.body;
        return std::string(json::parse(r.body).at("token").as_string());
    }

    HttpResult mcp_post(const std::string& token, const std::string& body) {
        auto h = post_headers();
        if (!token.empty()) h.emplace_back("Authorization", "Bearer " + token);
        return post(gateway_->port, "/mcp", body, h);
    }

    // A stateless 2026-07-28 request of `method` with the Tasks extension declared, as client "same-app".
    HttpResult modern_post(const std::string& token, const std::string& method, const std::string& params) {
        auto h = post_headers();
        h.emplace_back("Authorization", "Bearer " + token);
        h.emplace_back("MCP-Protocol-Version", "2026-07-28");
        h.emplace_back("Mcp-Method", method);
        if (method == "tools/call") h.emplace_back("Mcp-Name", "report");
        const std::string body = R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":{)" + params +
                                 R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                                 R"("io.modelcontextprotocol/clientInfo":{"name":"same-app","version":"1"},)"
                                 R"("io.modelcontextprotocol/clientCapabilities":)"
                                 R"({"extensions":{"io.modelcontextprotocol/tasks":{}}}}}})";
        return post(gateway_->port, "/mcp", body, h);
    }

    json::object stats() { return json::parse(get(as_->port, "/admin/stats").body).as_object(); }

    json::object server_status(const std::string& out) {
        const auto pos = out.find("{\"servers\"");  // stderr lines ([warning] ...) may come first
        json::error_code ec;
        auto v = json::parse(
            pos == std::string::npos ? "" : std::string_view(out).substr(pos, out.find('\n', pos) - pos), ec);
        const auto* servers = ec || !v.is_object() ? nullptr : v.as_object().if_contains("servers");
        if (!servers || !servers->is_array()) return {};
        for (const auto& s : servers->as_array())
            if (s.at("name").as_string() == "remote") return s.as_object();
        return {};
    }

    fs::path dir_, tokens_;
    std::string audience_, gateway_config_, client_config_;
    std::unique_ptr<ListeningServer> as_, gateway_;
};

}  // namespace

TEST_F(OAuth, GatewayAcceptsValidJwtsAndRefusesExpiredWrongAudienceAndForgedOnes) {
    start_auth_server();
    start_gateway();

    // Without a token: 401 pointing at the resource metadata, which names the authorization server.
    auto none = mcp_post("", init_body);
    EXPECT_EQ(none.status, 401);
    const auto challenge = none.headers["www-authenticate"];
    EXPECT_NE(challenge.find("Bearer resource_metadata=\"http://127.0.0.1:"), std::string::npos) << challenge;
    auto prm = get(gateway_->port, "/.well-known/oauth-protected-resource/mcp");
    ASSERT_EQ(prm.status, 200) << prm.body;
    auto meta = json::parse(prm.body).as_object();
    EXPECT_EQ(meta.at("resource").as_string(), audience_);
    EXPECT_EQ(meta.at("authorization_servers").as_array().at(0).as_string(), as_->url);

    auto valid = mint(R"({"aud":")" + audience_ + R"(","scope":"mcp:tools"})");
    auto ok = mcp_post(valid, init_body);
    EXPECT_EQ(ok.status, 200) << ok.body;

    for (const auto& [spec, why] : std::vector<std::pair<std::string, std::string>>{
             {R"({"aud":")" + audience_ + R"(","expiresIn":-600})", "expired"},
             {R"({"aud":"http://127.0.0.1:1/other"})", "another audience"},
             {R"({"aud":")" + audience_ + R"(","badSignature":true})", "signature"},
             {R"({"aud":")" + audience_ + R"(","issuer":"https://attacker.example"})", "another issuer"}}) {
        const auto token = mint(spec);
        auto refused = mcp_post(token, init_body);
        EXPECT_EQ(refused.status, 401) << spec;
        EXPECT_NE(refused.headers["www-authenticate"].find("error=\"invalid_token\""), std::string::npos) << spec;
        EXPECT_NE(refused.body.find(why), std::string::npos) << refused.body;
        EXPECT_EQ(refused.body.find(token), std::string::npos) << "the token must not be echoed";
        EXPECT_EQ(gateway_->log().find(token), std::string::npos) << "the token must not be logged";
    }

    // A rotated key (a kid the gateway has not seen) is fetched again from the JWKS (at most every 2 s: a token
    // with a made-up kid must not make the gateway fetch on every request).
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));
    ASSERT_EQ(post(as_->port, "/admin/rotate", "", post_headers()).status, 200);
    auto rotated = mint(R"({"aud":")" + audience_ + R"("})");
    EXPECT_EQ(mcp_post(rotated, init_body).status, 200);

    // Scopes map to tools: "echo:only" may call echo, not add.
    auto narrow = mint(R"({"aud":")" + audience_ + R"(","scope":"echo:only"})");
    const std::string call_add =
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}})";
    auto forbidden = mcp_post(narrow, call_add);
    EXPECT_EQ(forbidden.status, 403) << forbidden.body;
    EXPECT_NE(forbidden.headers["www-authenticate"].find("insufficient_scope"), std::string::npos);
    EXPECT_NE(forbidden.headers["www-authenticate"].find("scope=\"mcp:tools\""), std::string::npos)
        << forbidden.headers["www-authenticate"];
}

// A task belongs to who created it: behind OAuth, the token's subject (not the clientInfo name, which anyone can
// send). Two users of the same app: one's task id is unknown to the other, even when the other asks for it.
TEST_F(OAuth, GatewayTasksBelongToTheTokensSubject) {
    start_auth_server();
    start_gateway(R"("--tasks")");
    const auto alice = mint(R"({"aud":")" + audience_ + R"(","scope":"mcp:tools","sub":"alice"})");
    const auto bob = mint(R"({"aud":")" + audience_ + R"(","scope":"mcp:tools","sub":"bob"})");

    auto created = modern_post(alice, "tools/call", R"("name":"report","arguments":{"seconds":30},)");
    ASSERT_EQ(created.status, 200) << created.body;
    const auto result = json::parse(created.body).at("result").as_object();
    ASSERT_EQ(result.at("resultType").as_string(), "task") << created.body;
    const std::string task_id(result.at("taskId").as_string());

    const auto get = R"("taskId":")" + task_id + R"(",)";
    auto mine = modern_post(alice, "tasks/get", get);
    EXPECT_EQ(mine.status, 200) << mine.body;
    EXPECT_TRUE(json::parse(mine.body).as_object().contains("result")) << mine.body;
    for (const auto* method : {"tasks/get", "tasks/cancel"}) {
        auto theirs = modern_post(bob, method, get);
        EXPECT_NE(theirs.body.find("Unknown taskId"), std::string::npos) << method << ": " << theirs.body;
        EXPECT_FALSE(json::parse(theirs.body).as_object().contains("result")) << theirs.body;
    }
    // A client cannot claim to be alice by sending the principal itself: the header and the _meta key are replaced.
    auto h = post_headers();
    h.emplace_back("Authorization", "Bearer " + bob);
    h.emplace_back("X-Switchboard-Principal", as_->url + " alice");
    h.emplace_back("MCP-Protocol-Version", "2026-07-28");
    h.emplace_back("Mcp-Method", "tasks/get");
    const std::string forged =
        R"({"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":")" + task_id +
        R"(","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.switchboard/principal":")" + as_->url +
        R"( alice","io.modelcontextprotocol/clientInfo":{"name":"same-app","version":"1"},)"
        R"("io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}})";
    auto spoofed = post(gateway_->port, "/mcp", forged, h);
    EXPECT_NE(spoofed.body.find("Unknown taskId"), std::string::npos) << spoofed.body;
    EXPECT_EQ(modern_post(alice, "tasks/cancel", get).status, 200);
}

TEST_F(OAuth, LoginThenConnectRefreshAndNoTokenInOutput) {
    start_auth_server({"--token-ttl", "3"});
    start_gateway();

    // Before a login: phase needs-auth with the command to run, not an error loop.
    std::string out;
    int rc = cli("status --json", out);
    EXPECT_NE(rc, 0) << out;
    auto before = server_status(out);
    ASSERT_FALSE(before.empty()) << out;
    EXPECT_EQ(before.at("phase").as_string(), "needs-auth") << out;
    EXPECT_NE(std::string(before.at("error").as_string()).find("switchboard auth login remote"), std::string::npos)
        << out;

    // The login: browser (the test server), loopback redirect, PKCE, code exchange, token stored 0600.
    rc = cli("auth login remote", out);
    ASSERT_EQ(rc, 0) << out << gateway_->log() << as_->log();
    EXPECT_NE(out.find("Logged in to \"remote\""), std::string::npos) << out;
    struct stat st {};
    ASSERT_EQ(::stat(tokens_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    auto stored = json::parse(read_text(tokens_)).at("servers").at("remote").as_object();
    const std::string access(stored.at("tokens").at("accessToken").as_string());
    const std::string refresh(stored.at("tokens").at("refreshToken").as_string());
    EXPECT_EQ(out.find(access), std::string::npos);
    EXPECT_EQ(stored.at("issuer").as_string(), as_->url);

    // Connected, with the demo server's tools through the gateway.
    rc = cli("-v status --json", out);
    EXPECT_EQ(rc, 0) << out;
    auto after = server_status(out);
    ASSERT_FALSE(after.empty()) << out;
    EXPECT_EQ(after.at("phase").as_string(), "connected") << out;
    EXPECT_GT(after.at("tools").as_int64(), 0);
    EXPECT_EQ(out.find(access), std::string::npos) << "a debug log must not show the token";
    EXPECT_EQ(out.find(refresh), std::string::npos);

    // The token expires (3 s): the next command refreshes it instead of asking for a login.
    std::this_thread::sleep_for(std::chrono::seconds(4));
    rc = cli("call remote__echo '{\"message\":\"after refresh\"}'", out);
    if (rc != 0) rc = cli("call echo '{\"message\":\"after refresh\"}'", out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("after refresh"), std::string::npos) << out;
    EXPECT_GE(stats().at("token").at("refresh_token").as_int64(), 1) << json::serialize(stats());

    // auth status shows the login without any token.
    rc = cli("auth status --json", out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("\"state\":\"logged-in\""), std::string::npos) << out;
    const auto now_stored = json::parse(read_text(tokens_)).at("servers").at("remote").at("tokens");
    EXPECT_EQ(out.find(std::string(now_stored.at("accessToken").as_string())), std::string::npos);

    // Revoked refresh tokens: once the access token expires the server is needs-auth again.
    ASSERT_EQ(post(as_->port, "/admin/revoke", "", post_headers()).status, 200);
    std::this_thread::sleep_for(std::chrono::seconds(4));
    rc = cli("status --json", out);
    EXPECT_NE(rc, 0) << out;
    auto revoked = server_status(out);
    ASSERT_FALSE(revoked.empty()) << out;
    EXPECT_EQ(revoked.at("phase").as_string(), "needs-auth") << out;

    // Logout forgets it.
    rc = cli("auth logout remote", out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_EQ(json::parse(read_text(tokens_)).at("servers").as_object().count("remote"), 0u);
}

TEST_F(OAuth, MixUpAttackIsRefused) {
    // The authorization server's redirect names another issuer (RFC 9207): no code is exchanged, nothing stored.
    start_auth_server({"--iss", "wrong"});
    start_gateway();
    std::string out;
    int rc = cli("auth login remote", out);
    EXPECT_NE(rc, 0) << out;
    EXPECT_NE(out.find("https://attacker.example"), std::string::npos) << out;
    EXPECT_NE(out.find("mix-up"), std::string::npos) << out;
    EXPECT_EQ(stats().at("token").as_object().count("authorization_code"), 0u) << json::serialize(stats());
    EXPECT_FALSE(fs::exists(tokens_) && json::parse(read_text(tokens_)).at("servers").as_object().contains("remote") &&
                 json::parse(read_text(tokens_)).at("servers").at("remote").as_object().if_contains("tokens") !=
                     nullptr);
}

TEST_F(OAuth, ServeNoticesALoginMadeElsewhere) {
    start_auth_server();
    start_gateway();
    // A host (serve on another port, the protected gateway as its upstream) waits in needs-auth...
    auto host_config = (dir_ / "host.json").string();
    std::ofstream(host_config) << R"({"mcpServers": {"remote": {"url": ")" << audience_ << R"("}}})";
    const auto cmd_env = "SWITCHBOARD_TOKEN_FILE=" + tokens_.string();
    ::setenv("SWITCHBOARD_TOKEN_FILE", tokens_.c_str(), 1);
    auto host = start_listening(SWITCHBOARD_CLI, {"--config", host_config, "serve", "--port", "0"});
    ::unsetenv("SWITCHBOARD_TOKEN_FILE");
    ASSERT_TRUE(host);
    auto phase = [&] {
        auto r = get(host->port, "/api/servers");
        auto v = json::parse(r.body);
        for (const auto& s : v.at("servers").as_array())
            if (s.at("name").as_string() == "remote") return std::string(s.at("phase").as_string());
        return std::string();
    };
    for (int i = 0; i < 100 && phase() != "needs-auth"; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_EQ(phase(), "needs-auth") << host->log();
    // ...until `auth login` in another process stores a token: then it connects by itself.
    std::string out;
    ASSERT_EQ(cli("auth login remote", out), 0) << out;
    for (int i = 0; i < 100 && phase() != "connected"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(phase(), "connected") << host->log();
}

TEST_F(OAuth, DpopBindsTheTokenToAKeyAndEveryRequestProvesIt) {
    // The authorization server binds tokens to a DPoP key and first demands a nonce; the gateway advertises DPoP in
    // its resource metadata and checks every request's proof.
    start_auth_server({"--dpop", "as-nonce-1", "--token-ttl", "3"});
    start_gateway();
    std::string out;
    int rc = cli("auth login remote", out);
    ASSERT_EQ(rc, 0) << out << as_->log();
    auto stored = json::parse(read_text(tokens_)).at("servers").at("remote").at("tokens").as_object();
    EXPECT_EQ(stored.at("tokenType").as_string(), "DPoP");
    const std::string access(stored.at("accessToken").as_string());
    const std::string pem(stored.at("dpopKey").as_string());
    EXPECT_NE(pem.find("PRIVATE KEY"), std::string::npos);
    auto s = stats();
    EXPECT_GE(s.at("dpopNonce").as_int64(), 1) << json::serialize(s);  // asked for a nonce, and the retry had it
    EXPECT_GE(s.at("dpop").as_int64(), 1) << json::serialize(s);
    rc = cli("auth status --json", out);
    EXPECT_NE(out.find("\"tokenType\":\"DPoP\""), std::string::npos) << out;

    // Calls through the gateway: every request with a fresh proof of the key.
    rc = cli("call echo '{\"message\":\"bound\"}'", out);
    EXPECT_EQ(rc, 0) << out << gateway_->log();
    EXPECT_NE(out.find("bound"), std::string::npos) << out;

    // The token expires (3 s): the bound refresh token is used with a proof of the same key.
    std::this_thread::sleep_for(std::chrono::seconds(4));
    rc = cli("-v call echo '{\"message\":\"refreshed\"}'", out);
    EXPECT_EQ(rc, 0) << out << gateway_->log();
    EXPECT_NE(out.find("refreshed"), std::string::npos) << out;
    s = stats();
    EXPECT_GE(s.at("token").at("refresh_token").as_int64(), 1) << json::serialize(s);
    EXPECT_GE(s.at("dpop").as_int64(), 2) << json::serialize(s);
    stored = json::parse(read_text(tokens_)).at("servers").at("remote").at("tokens").as_object();
    const std::string current(stored.at("accessToken").as_string());
    EXPECT_NE(current, access) << "refreshed";
    EXPECT_EQ(stored.at("dpopKey").as_string(), pem) << "the refreshed token is bound to the same key";
    EXPECT_EQ(out.find(current), std::string::npos) << "a debug log must not show the token";
    EXPECT_EQ(out.find(access), std::string::npos);
    EXPECT_EQ(out.find(pem.substr(40, 40)), std::string::npos) << "nor the key";

    // A stolen token alone is useless: as Bearer, or as DPoP without a proof, or with a proof by another key.
    auto as_bearer = mcp_post(current, init_body);
    EXPECT_EQ(as_bearer.status, 401);
    EXPECT_NE(as_bearer.body.find("DPoP-bound"), std::string::npos) << as_bearer.body;
    auto dpop_post = [&](const std::string& proof) {
        auto h = post_headers();
        h.emplace_back("Authorization", "DPoP " + current);
        if (!proof.empty()) h.emplace_back("DPoP", proof);
        return post(gateway_->port, "/mcp", init_body, h);
    };
    auto no_proof = dpop_post("");
    EXPECT_EQ(no_proof.status, 401);
    EXPECT_NE(no_proof.body.find("no DPoP proof"), std::string::npos) << no_proof.body;
    const auto htu = audience_;
    auto thief = switchboard::auth::Key::generate("ES256", "");
    auto other_key = dpop_post(switchboard::auth::make_dpop_proof(thief, "POST", htu, current, ""));
    EXPECT_EQ(other_key.status, 401);
    EXPECT_NE(other_key.body.find("another key"), std::string::npos) << other_key.body;

    // With the key: accepted once; the same proof again is a replay.
    std::string error;
    auto key = switchboard::auth::Key::from_pem(pem, error);
    ASSERT_TRUE(key) << error;
    const auto proof = switchboard::auth::make_dpop_proof(*key, "POST", htu, current, "");
    EXPECT_EQ(dpop_post(proof).status, 200);
    auto replay = dpop_post(proof);
    EXPECT_EQ(replay.status, 401);
    EXPECT_NE(replay.body.find("used before"), std::string::npos) << replay.body;
    EXPECT_NE(replay.headers["www-authenticate"].find("DPoP"), std::string::npos);
    // A proof for another URL or method is refused too.
    auto wrong_url = dpop_post(switchboard::auth::make_dpop_proof(*key, "POST", htu + "/other", current, ""));
    EXPECT_EQ(wrong_url.status, 401);
    EXPECT_EQ(gateway_->log().find(current), std::string::npos) << "the token must not be logged";

    // Logout revokes the tokens at the authorization server (RFC 7009) before forgetting them.
    EXPECT_EQ(stats().at("refreshTokens").to_number<std::int64_t>(), 1);
    rc = cli("auth logout remote", out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("the authorization server revoked the tokens"), std::string::npos) << out;
    s = stats();
    EXPECT_EQ(s.at("revoke").as_int64(), 2) << json::serialize(s);  // the refresh token, then the access token
    EXPECT_EQ(s.at("refreshTokens").to_number<std::int64_t>(), 0) << json::serialize(s);
}
