// Editing a config file one server entry at a time (the web UI's server form): the entry's text is replaced, added or
// removed, and every other byte of the file stays as it was (comments, order, formatting, other servers). Comments
// inside a replaced entry are not kept. A bad entry never reaches the file: the edited text is parsed again, and the
// entry checked exactly as the loader checks it, before the file is written (atomically).
//
// Thread-safety: free functions; no shared state.
#pragma once

#include <switchboard/host/config.hpp>

#include <boost/json/object.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::host {

struct ServerEntryEdit {
    std::string name;                          ///< the entry's name after the edit
    std::string previous_name;                 ///< the entry to replace (empty: `name`); absent: a new entry
    std::optional<boost::json::object> entry;  ///< the object under the name in `mcpServers`; nullopt: remove
};

/// The edited text. Throws ConfigError (naming `source`) when the text is not a config object, when `name` is taken
/// by another entry, or when an entry to remove does not exist.
std::string edit_server_entry(std::string_view text, const ServerEntryEdit& edit, std::string_view source);

/// Each server entry as written in the file (no `${VAR}` expanded), by name; entries that are not objects are left
/// out. Throws ConfigError on text that is not JSON(C).
std::map<std::string, boost::json::object, std::less<>> raw_server_entries(std::string_view text,
                                                                           std::string_view source);

/// `entry` as a JSON member value, indented for a member whose key starts at column `indent`.
std::string format_entry(const boost::json::value& entry, std::size_t indent);

/// The text with the top-level member `key` set to `value` (replaced in place, or added as the first member); every
/// other byte stays. Throws ConfigError when the text is not a JSON(C) object.
std::string set_top_level_member(std::string_view text, std::string_view key, const boost::json::value& value,
                                 std::string_view source);

/// The top-level member `key` as written (no `${VAR}` expanded); null when absent. Throws ConfigError on bad JSON(C).
boost::json::value raw_top_level_member(std::string_view text, std::string_view key, std::string_view source);

struct ConfigFileEdit {
    Config config;                      ///< the file as loaded after the edit
    std::vector<std::string> warnings;  ///< about the edited entry (unknown keys, unset variables)
};

/// Reads `file`, applies `edit`, checks the result and writes it atomically. Throws ConfigError when the edit is
/// refused (the reason names the server and the field); the file is then untouched. Throws std::runtime_error when
/// the file cannot be read or written.
ConfigFileEdit edit_config_file(const std::filesystem::path& file, const ServerEntryEdit& edit,
                                const EnvLookup& env = process_env());

/// Reads `file`, sets its top-level `key` (the `llm` object, say), checks that the file still loads, and writes it
/// atomically; the loaded result. Throws like edit_config_file.
Config edit_config_member(const std::filesystem::path& file, std::string_view key, const boost::json::value& value,
                          const EnvLookup& env = process_env());

/// Adds the server `name` to `file`, which is created (`{"mcpServers": {}}`) when it does not exist. `secrets` are
/// set in the env file beside it (env_file.hpp) first, and count as set when the entry is checked. Throws ConfigError
/// when the name is taken ("remove it first") or the entry is refused: nothing is written then.
ConfigFileEdit add_server_to_file(const std::filesystem::path& file, const std::string& name,
                                  const boost::json::object& entry,
                                  const std::map<std::string, std::string>& secrets = {},
                                  const EnvLookup& env = process_env());

/// The text of `file` (std::runtime_error naming it when it cannot be read).
std::string read_config_text(const std::filesystem::path& file);

}  // namespace switchboard::host
