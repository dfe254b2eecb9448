// `${VAR}` and `${VAR:-default}` expansion: expand_vars, the expansion the entry and `llm` parsers share, and the
// process environment it reads by default.
#include "config_parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace switchboard::host {

using detail::expand_into;
using detail::Expansion;
using detail::max_expansion_depth;

namespace {

void add_once(std::vector<std::string>& list, std::string item) {
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(std::move(item));
}

bool is_var_name(std::string_view name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    });
}

// Index of the `}` closing a `${` whose body starts at `body_start`; nested `${...}` (in defaults) are skipped.
std::size_t find_close(std::string_view text, std::size_t body_start) {
    int depth = 1;
    for (std::size_t i = body_start; i < text.size(); ++i) {
        if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
            ++depth;
            ++i;
        } else if (text[i] == '}' && --depth == 0) {
            return i;
        }
    }
    return std::string_view::npos;
}

// Expands the body of one `${...}`; false when it is not a reference we understand (then it stays literal).
bool expand_reference(std::string_view body, const EnvLookup& env, Expansion& ex, std::string& out) {
    if (body.starts_with("input:")) {
        add_once(ex.inputs, fmt::format("${{{}}}", body));
        return false;
    }
    if (body.starts_with("env:")) body.remove_prefix(4);  // VS Code spelling of the same thing
    const auto sep = body.find(":-");
    const auto name = body.substr(0, sep);
    if (!is_var_name(name)) return false;
    // Each server's own state directory (sandbox.hpp): filled in when that server starts, not from the environment.
    if (name == "SWITCHBOARD_STATE_DIR") return false;
    const auto value = env(name);
    if (value && !value->empty()) {
        out += *value;
    } else if (sep != std::string_view::npos) {
        if (ex.depth >= max_expansion_depth) {
            ex.too_deep = true;
            return true;
        }
        ++ex.depth;
        expand_into(body.substr(sep + 2), env, ex, out);
        --ex.depth;
    } else if (!value) {
        add_once(ex.missing, std::string(name));
    }
    return true;
}

}  // namespace

void detail::expand_into(std::string_view text, const EnvLookup& env, Expansion& ex, std::string& out) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto open = text.find("${", pos);
        if (open == std::string_view::npos) break;
        out.append(text.substr(pos, open - pos));
        const auto close = find_close(text, open + 2);
        if (close == std::string_view::npos) {
            pos = open;  // unterminated: the rest is literal
            break;
        }
        if (!expand_reference(text.substr(open + 2, close - open - 2), env, ex, out))
            out.append(text.substr(open, close - open + 1));
        pos = close + 1;
    }
    if (pos < text.size()) out.append(text.substr(pos));
}

EnvLookup process_env() {
    return [](std::string_view name) -> std::optional<std::string> {
        const std::string key(name);  // getenv needs a NUL-terminated name
        const char* value = std::getenv(key.c_str());
        if (!value) return std::nullopt;
        return std::string(value);
    };
}

std::string expand_vars(std::string_view text, const EnvLookup& env, std::vector<std::string>* missing) {
    Expansion ex;
    std::string out;
    expand_into(text, env, ex, out);
    if (missing)
        for (auto& name : ex.missing) add_once(*missing, std::move(name));
    return out;
}

}  // namespace switchboard::host
