// The config loader: JSONC (comments, trailing commas), `${VAR}` and `${VAR:-default}` expansion (nested, bounded),
// every server entry's checks. Bad input is an error or a warning naming the cause, never a crash or a hang.
#include <switchboard/host/config.hpp>

#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // A fixed environment: some names set, the rest unset.
    const switchboard::host::EnvLookup env = [](std::string_view name) -> std::optional<std::string> {
        if (name == "HOME") return std::string("/home/fuzz");
        if (name == "TOKEN") return std::string("s3cret");
        if (name == "NESTED") return std::string("${TOKEN}");
        return std::nullopt;
    };
    try {
        auto config = switchboard::host::parse_config(text, "fuzz.json", env);
        (void)config.servers.size();
    } catch (const switchboard::host::ConfigError&) {
        // The documented refusal (invalid JSON with line:column, no server map): anything else escaping is a bug.
    }
    std::vector<std::string> missing;
    (void)switchboard::host::expand_vars(text, env, &missing);
    return 0;
}
