// http::parse_url, which every URL from outside goes through (a config, a redirect's Location, an SSE `endpoint`
// event, OAuth metadata): what it refuses, found by fuzz/targets/url.cpp.
#include <switchboard/http/url.hpp>

#include <gtest/gtest.h>

using switchboard::http::parse_url;

TEST(HttpUrl, PortsMustBeOneTo65535) {
    std::string error;
    auto ok = parse_url("https://h:8443/mcp", error);
    ASSERT_TRUE(ok) << error;
    EXPECT_EQ(ok->port, "8443");
    EXPECT_EQ(parse_url("http://h/mcp", error)->port, "80");
    EXPECT_EQ(parse_url("http://h:65535/", error)->port, "65535");
    // 99999 would wrap to port 34463 when connecting.
    for (const char* bad :
         {"http://h:99999/mcp", "http://h:0/mcp", "http://h:65536/", "http://h:18446744073709551617/"}) {
        EXPECT_FALSE(parse_url(bad, error)) << bad;
        EXPECT_NE(error.find("invalid port"), std::string::npos) << error;
    }
}

TEST(HttpUrl, AnAuthorityIsFollowedByAnAbsolutePath) {
    std::string error;
    // Read as host ";" and path "s", this once printed as http://;s: another URL than the one given.
    EXPECT_FALSE(parse_url("http://;:s", error));
    auto u = parse_url("http://h?q=1", error);
    ASSERT_TRUE(u) << error;
    EXPECT_EQ(u->target, "/?q=1");
    EXPECT_EQ(u->text(), "http://h/?q=1");
}
