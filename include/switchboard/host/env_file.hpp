// The secrets file beside a config: `KEY=VALUE` lines that `${KEY}` references in the config expand to, so that a
// secret asked for when a server was added (`registry add`, the web UI) never sits in the config itself. For
// `.mcp.json` it is `.mcp.env`, for `settings.json` `settings.env`; written 0600, atomically, and hidden from
// confined servers as the config is. The process environment wins over the file (as with docker compose's `.env`).
//
// Thread-safety: free functions; no shared state.
#pragma once

#include <switchboard/host/config.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace switchboard::host {

/// `<dir>/<stem>.env` for the config file `config`.
std::filesystem::path env_file_for(const std::filesystem::path& config);

/// The file's variables; empty when it does not exist. Blank lines and `#` comments are skipped; a line that is not
/// `KEY=VALUE` throws ConfigError naming "file:line".
std::map<std::string, std::string> read_env_file(const std::filesystem::path& file);

/// Sets `values` in the file (the other lines kept as they are), creating it 0600. Throws std::runtime_error naming
/// the file when it cannot be written, ConfigError when a key is not a variable name or a value spans lines.
void set_env_file_values(const std::filesystem::path& file, const std::map<std::string, std::string>& values);

/// `env` first, then the variables of the env file beside `config` (read now). A file that does not parse counts as
/// none, and says why in `warnings` when given.
EnvLookup with_env_file(EnvLookup env, const std::filesystem::path& config,
                        std::vector<std::string>* warnings = nullptr);

/// The env file variable for server `server`'s secret `key`: "SERVER_KEY", upper case, every character that cannot
/// be in a variable name made '_' (`registry add`'s secrets, `add --client-secret`).
std::string secret_variable(std::string_view server, std::string_view key);

/// Whether `name` can be a variable: a letter or `_`, then letters, digits and `_`.
bool is_variable_name(std::string_view name);

}  // namespace switchboard::host
