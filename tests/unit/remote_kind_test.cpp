#include <switchboard/transport/http_client.hpp>

#include <gtest/gtest.h>

using namespace switchboard::transport;

TEST(RemoteKind, InferredFromTheUrl) {
    EXPECT_EQ(infer_remote_kind("ws://h/x"), RemoteKind::websocket);
    EXPECT_EQ(infer_remote_kind("WSS://h/x"), RemoteKind::websocket);
    EXPECT_EQ(infer_remote_kind("http://h:1/sse"), RemoteKind::sse);
    EXPECT_EQ(infer_remote_kind("https://h/a/sse?token=1"), RemoteKind::sse);
    EXPECT_EQ(infer_remote_kind("https://h/mcp"), RemoteKind::streamable_http);
    EXPECT_EQ(infer_remote_kind("https://h/ssex"), RemoteKind::streamable_http);
}

TEST(HeaderRedaction, SecretsNeverShown) {
    EXPECT_TRUE(is_secret_header("Authorization"));
    EXPECT_TRUE(is_secret_header("X-Api-Key"));
    EXPECT_TRUE(is_secret_header("x-github-token"));
    EXPECT_FALSE(is_secret_header("X-Tenant"));
    EXPECT_EQ(redact_header_value("Authorization", "Bearer s3cr3t"), "Bearer [redacted]");
    EXPECT_EQ(redact_header_value("X-Api-Key", "s3cr3t"), "[redacted]");
    EXPECT_EQ(redact_header_value("X-Tenant", "acme"), "acme");
}
