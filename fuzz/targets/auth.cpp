// What an MCP server and its authorization server send a client: WWW-Authenticate challenges, resource and
// authorization-server metadata, JWTs and DPoP proofs (also what the gateway reads as a resource server).
#include "fuzz_input.hpp"

#include <switchboard/auth/challenge.hpp>
#include <switchboard/auth/dpop.hpp>
#include <switchboard/auth/jwt.hpp>
#include <switchboard/auth/metadata.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace auth = switchboard::auth;
    switchboard::fuzz::Input in(data, size);
    const auto mode = in.byte() % 4;
    const auto text = in.rest();
    std::string error;
    switch (mode) {
    case 0: {
        (void)auth::parse_challenges(text);
        (void)auth::read_bearer_challenge({std::string(text)});
        break;
    }
    case 1: {
        (void)auth::parse_resource_metadata("https://mcp.example/.well-known/oauth-protected-resource", text, error);
        (void)auth::parse_server_metadata("https://as.example/.well-known/oauth-authorization-server", text,
                                          "https://as.example", error);
        break;
    }
    case 2: {
        if (auto jwt = auth::decode_jwt(text, error)) {
            if (const auto* jwk = jwt->header.if_contains("jwk"); jwk && jwk->is_object()) {
                (void)auth::jwk_thumbprint(jwk->get_object());
                if (auto key = auth::Key::from_jwk(jwk->get_object(), error)) (void)auth::verify_signature(*jwt, *key);
            }
        }
        break;
    }
    default:
        (void)auth::check_dpop_proof(text, "POST", "https://mcp.example/mcp", "token", 1700000000, 300, error);
        break;
    }
    return 0;
}
