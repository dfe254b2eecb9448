// Protocol versions and eras. Switchboard is dual-era: the handshake ("legacy") versions 2024-11-05 … 2025-11-25
// and the stateless ("modern") 2026-07-28, where every request carries its version in `_meta`.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace switchboard::mcp {

enum class Era { legacy, modern };

std::string_view to_string(Era era);

inline constexpr std::string_view modern_version = "2026-07-28";
inline constexpr std::string_view latest_legacy_version = "2025-11-25";
/// Legacy versions we accept in an InitializeResult, newest first.
inline constexpr std::array<std::string_view, 4> legacy_versions{"2025-11-25", "2025-06-18", "2025-03-26",
                                                                 "2024-11-05"};
/// Modern versions we can send, preferred first.
inline constexpr std::array<std::string_view, 1> modern_versions{"2026-07-28"};

bool is_legacy_version(std::string_view v);
bool is_modern_version(std::string_view v);

namespace meta {
inline constexpr std::string_view protocol_version = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view client_info = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view client_capabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view server_info = "io.modelcontextprotocol/serverInfo";
inline constexpr std::string_view log_level = "io.modelcontextprotocol/logLevel";
inline constexpr std::string_view subscription_id = "io.modelcontextprotocol/subscriptionId";
}  // namespace meta

}  // namespace switchboard::mcp
