// Agent and skill files: YAML frontmatter (name, description, tools, mcp: [..] or {required, optional}, model, ...)
// and a Markdown body. A bad file is an error naming its line, never a crash.
#include "fuzz_input.hpp"

#include <switchboard/agent/definition.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    switchboard::fuzz::Input in(data, size);
    const auto kind =
        in.byte() % 2 ? switchboard::agent::Definition::Kind::skill : switchboard::agent::Definition::Kind::agent;
    std::string error;
    auto d = switchboard::agent::parse_definition(in.rest(), kind, "/fuzz/agents/fuzz-agent.md", error);
    (void)switchboard::agent::is_valid_name(in.rest().substr(0, 70));
    (void)d;
    return 0;
}
