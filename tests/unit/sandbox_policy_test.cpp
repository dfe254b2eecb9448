// The confinement policy's pure parts: the config keys (host/config.hpp), the launcher profiles and the paths a
// server's error line shows refused (host/sandbox.hpp). The launch itself is tested end to end in
// tests/integration/sandbox_test.cpp.
#include <switchboard/host/config.hpp>
#include <switchboard/host/sandbox.hpp>

#include <gtest/gtest.h>

namespace switchboard::host {
namespace {

Config parse(const std::string& text) {
    return parse_config(text, "<test>", [](std::string_view) { return std::nullopt; });
}

TEST(SandboxConfig, VsCodesKeysAreReadAndTheTopLevelSwitchReachesEveryStdioEntry) {
    const auto c = parse(R"({"sandboxEnabled": true, "mcpServers": {
        "a": {"command": "x", "sandbox": {"filesystem": {"allowWrite": ["~/out"], "denyRead": ["~/private"],
              "allowRead": ["~/.aws/config"]}, "network": {"allowedDomains": ["example.com", "*.example.com"],
              "deniedDomains": ["bad.example.com"], "allowedAddresses": ["127.0.0.1/32"]}}},
        "b": {"command": "x", "sandboxEnabled": false},
        "r": {"url": "http://127.0.0.1:1/mcp"}}})");
    ASSERT_EQ(c.servers.size(), 3u);
    const auto& a = c.servers[0].sandbox;
    EXPECT_EQ(a.enabled, true);
    EXPECT_EQ(a.allow_write, std::vector<std::string>{"~/out"});
    EXPECT_EQ(a.deny_read, std::vector<std::string>{"~/private"});
    EXPECT_EQ(a.allow_read, std::vector<std::string>{"~/.aws/config"});
    EXPECT_EQ(a.allowed_domains, (std::vector<std::string>{"example.com", "*.example.com"}));
    EXPECT_EQ(a.denied_domains, std::vector<std::string>{"bad.example.com"});
    EXPECT_EQ(a.allowed_addresses, std::vector<std::string>{"127.0.0.1/32"});
    EXPECT_EQ(c.servers[1].sandbox.enabled, false);  // the entry wins over the file
    EXPECT_FALSE(c.servers[2].sandbox.enabled);      // remote: nothing to confine
    EXPECT_TRUE(c.warnings.empty());
}

TEST(SandboxConfig, MistakesFailClosed) {
    // A wrong type at the top is still a request to confine.
    const auto top = parse(R"({"sandboxEnabled": "yes", "mcpServers": {"a": {"command": "x"}}})");
    EXPECT_EQ(top.servers[0].sandbox.enabled, true);
    ASSERT_EQ(top.warnings.size(), 1u);
    EXPECT_NE(top.warnings[0].find("taken as true"), std::string::npos);
    // In an entry, a wrong type or an unreadable policy makes the entry unusable rather than unconfined.
    const auto entry = parse(R"({"mcpServers": {"a": {"command": "x", "sandboxEnabled": 1},
        "b": {"command": "x", "sandboxEnabled": true, "sandbox": {"network": {"allowedDomains": "example.com"}}},
        "c": {"command": "x", "sandboxEnabled": true, "sandbox": {"network": {"allowedAddresses": ["nonsense"]}}},
        "d": {"command": "x", "sandbox": {"filesystem": {"alowWrite": []}}}}})");
    EXPECT_NE(entry.servers[0].invalid.find("\"sandboxEnabled\" must be true or false"), std::string::npos);
    EXPECT_NE(entry.servers[1].invalid.find("sandbox.network.allowedDomains"), std::string::npos);
    EXPECT_NE(entry.servers[2].invalid.find("allowedAddresses"), std::string::npos);
    EXPECT_TRUE(entry.servers[3].invalid.empty());
    ASSERT_FALSE(entry.warnings.empty());
    EXPECT_NE(entry.warnings.back().find("sandbox.filesystem.alowWrite"), std::string::npos);
}

TEST(SandboxProfiles, LaunchersGetTheirCachesAndRegistries) {
    const auto npx = launcher_profile("/usr/bin/npx");
    ASSERT_TRUE(npx);
    EXPECT_EQ(npx->name, "npx");
    EXPECT_EQ(npx->writable, std::vector<std::string>{"~/.npm"});
    EXPECT_EQ(npx->domains, std::vector<std::string>{"registry.npmjs.org"});
    const auto uvx = launcher_profile("uvx");
    ASSERT_TRUE(uvx);
    EXPECT_EQ(uvx->domains, (std::vector<std::string>{"pypi.org", "files.pythonhosted.org"}));
    EXPECT_EQ(launcher_profile("python3.12")->name, "python");
    EXPECT_TRUE(launcher_profile("deno"));
    EXPECT_TRUE(launcher_profile("bunx"));
    EXPECT_FALSE(launcher_profile("./my-server"));
}

TEST(SandboxRefusals, PathsAreFoundInTheErrorsServersPrint) {
    EXPECT_EQ(refused_paths_in("Error: EACCES: permission denied, open '/home/u/.npm/_cacache/tmp/x'"),
              std::vector<std::string>{"/home/u/.npm/_cacache/tmp/x"});
    EXPECT_EQ(refused_paths_in("PermissionError: [Errno 13] Permission denied: '/home/u/.cache/uv'"),
              std::vector<std::string>{"/home/u/.cache/uv"});
    EXPECT_EQ(refused_paths_in("OSError: [Errno 30] Read-only file system: \"/home/u/data.json\""),
              std::vector<std::string>{"/home/u/data.json"});
    EXPECT_EQ(refused_paths_in("touch: cannot touch /etc/x: Read-only file system"),
              std::vector<std::string>{"/etc/x"});
    EXPECT_TRUE(refused_paths_in("wrote /tmp/x just fine").empty());
    EXPECT_TRUE(refused_paths_in("Error: EACCES but no path").empty());
}

TEST(SandboxLayers, NamesRoundTrip) {
    for (auto layer : {SandboxLayer::bwrap, SandboxLayer::landlock}) EXPECT_EQ(parse_layer(layer_name(layer)), layer);
    EXPECT_EQ(layer_name(SandboxLayer::unconfined), "unconfined");
    EXPECT_EQ(layer_name(SandboxLayer::container), "container");
    EXPECT_FALSE(parse_layer("docker"));
}

}  // namespace
}  // namespace switchboard::host
