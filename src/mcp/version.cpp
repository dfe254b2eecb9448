#include <switchboard/mcp/version.hpp>

#include <algorithm>

namespace switchboard::mcp {

std::string_view to_string(Era era) { return era == Era::modern ? "modern" : "legacy"; }

bool is_legacy_version(std::string_view v) {
    return std::find(legacy_versions.begin(), legacy_versions.end(), v) != legacy_versions.end();
}

bool is_modern_version(std::string_view v) {
    return std::find(modern_versions.begin(), modern_versions.end(), v) != modern_versions.end();
}

}  // namespace switchboard::mcp
