#include <switchboard/host/env_file.hpp>

#include <switchboard/core/atomic_file.hpp>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace switchboard::host {

namespace fs = std::filesystem;

namespace {

std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s);
}

std::string read_text(const fs::path& file, bool& exists) {
    std::ifstream in(file, std::ios::binary);
    exists = static_cast<bool>(in);
    if (!in) return {};
    std::ostringstream text;
    text << in.rdbuf();
    return std::move(text).str();
}

// The key of a `KEY=VALUE` line (`export KEY=VALUE` too, as shells write them); empty for blanks and comments.
std::string key_of(std::string_view line) {
    auto t = trim(line);
    if (t.empty() || t.front() == '#') return {};
    if (t.starts_with("export ")) t = trim(std::string_view(t).substr(7));
    const auto eq = t.find('=');
    return eq == std::string::npos ? std::string("=") : trim(std::string_view(t).substr(0, eq));
}

// A value as written: quotes around it removed ("x y" or 'x y').
std::string value_of(std::string_view line) {
    auto v = trim(line.substr(line.find('=') + 1));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
        v = v.substr(1, v.size() - 2);
    return v;
}

}  // namespace

bool is_variable_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
    for (char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

std::string secret_variable(std::string_view server, std::string_view key) {
    std::string out;
    for (std::string_view part : {server, std::string_view("_"), key})
        for (char c : part)
            out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out.front()))) out.insert(0, "_");
    return out;
}

fs::path env_file_for(const fs::path& config) {
    auto stem = config.stem().string();
    return config.parent_path() / (stem + ".env");
}

std::map<std::string, std::string> read_env_file(const fs::path& file) {
    bool exists = false;
    const auto text = read_text(file, exists);
    std::map<std::string, std::string> out;
    std::istringstream lines(text);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
        const auto key = key_of(line);
        if (key.empty()) continue;
        if (!is_variable_name(key)) throw ConfigError(fmt::format("{}:{}: not a KEY=VALUE line", file.string(), n));
        out[key] = value_of(line);
    }
    return out;
}

void set_env_file_values(const fs::path& file, const std::map<std::string, std::string>& values) {
    for (const auto& [k, v] : values) {
        if (!is_variable_name(k)) throw ConfigError(fmt::format("\"{}\" is not a variable name", k));
        if (v.find_first_of("\r\n") != std::string::npos)
            throw ConfigError(fmt::format("the value of {} spans lines, which {} cannot hold", k, file.string()));
    }
    bool exists = false;
    const auto text = read_text(file, exists);
    std::string out;
    if (!exists)
        out = "# Secrets for the config beside this file, as ${NAME} references there expand them. Keep it private.\n";
    auto pending = values;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        const auto key = key_of(line);
        if (auto it = pending.find(key); !key.empty() && it != pending.end()) {
            out += fmt::format("{}={}\n", key, it->second);
            pending.erase(it);
        } else {
            out += line + "\n";
        }
    }
    for (const auto& [k, v] : pending) out += fmt::format("{}={}\n", k, v);
    core::AtomicWriteOptions o;
    o.mode = 0600;
    if (auto why = core::write_file_atomically(file, out, o); !why.empty()) throw std::runtime_error(why);
}

EnvLookup with_env_file(EnvLookup env, const fs::path& config, std::vector<std::string>* warnings) {
    std::map<std::string, std::string> file;
    try {
        file = read_env_file(env_file_for(config));
    } catch (const ConfigError& e) {
        // A hand-broken file: its variables count as unset, and the servers that need them say which.
        if (warnings) warnings->push_back(fmt::format("{} (its variables are not used)", e.what()));
    }
    if (file.empty()) return env;
    return [env = std::move(env), file = std::move(file)](std::string_view name) -> std::optional<std::string> {
        if (auto v = env(name)) return v;
        if (auto it = file.find(std::string(name)); it != file.end()) return it->second;
        return std::nullopt;
    };
}

}  // namespace switchboard::host
