#include <switchboard/auth/challenge.hpp>

#include <switchboard/core/text.hpp>

namespace switchboard::auth {

namespace {

bool is_tchar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

struct Cursor {
    std::string_view s;
    std::size_t i = 0;
    bool end() const { return i >= s.size(); }
    void skip_ws() {
        while (!end() && (s[i] == ' ' || s[i] == '\t')) ++i;
    }
    std::string token() {
        const auto b = i;
        while (!end() && is_tchar(s[i])) ++i;
        return std::string(s.substr(b, i - b));
    }
    std::string quoted() {  // at the opening quote
        std::string out;
        for (++i; !end(); ++i) {
            if (s[i] == '\\' && i + 1 < s.size()) {
                out += s[++i];
            } else if (s[i] == '"') {
                ++i;
                return out;
            } else {
                out += s[i];
            }
        }
        return out;  // unterminated: what there was
    }
};

}  // namespace

std::string Challenge::param(std::string_view name) const {
    auto it = params.find(std::string(name));
    return it == params.end() ? std::string() : it->second;
}

std::vector<Challenge> parse_challenges(std::string_view header) {
    std::vector<Challenge> out;
    Cursor c{header};
    while (!c.end()) {
        c.skip_ws();
        if (!c.end() && c.s[c.i] == ',') {
            ++c.i;
            continue;
        }
        auto scheme = c.token();
        if (scheme.empty()) {  // garbage: skip to the next comma
            while (!c.end() && c.s[c.i] != ',') ++c.i;
            continue;
        }
        Challenge ch;
        ch.scheme = core::ascii_lower(scheme);
        c.skip_ws();
        // Parameters (name=value, comma-separated) until a token not followed by '=' starts the next challenge.
        for (;;) {
            c.skip_ws();
            const auto mark = c.i;
            auto name = c.token();
            c.skip_ws();
            if (name.empty() || c.end() || c.s[c.i] != '=') {
                if (name.empty() && !c.end() && c.s[c.i] != ',') {  // token68 or garbage: skip it
                    while (!c.end() && c.s[c.i] != ',') ++c.i;
                    continue;
                }
                if (!name.empty()) c.i = mark;  // the next challenge's scheme
                if (name.empty() && !c.end() && c.s[c.i] == ',') {
                    ++c.i;
                    continue;
                }
                break;
            }
            ++c.i;  // '='
            c.skip_ws();
            std::string value;
            if (!c.end() && c.s[c.i] == '"') {
                value = c.quoted();
            } else {
                const auto b = c.i;
                while (!c.end() && c.s[c.i] != ',') ++c.i;
                value = std::string(c.s.substr(b, c.i - b));
                while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
                // token68 ends in '=' padding: "abc==" parsed as name "abc" and value "="; harmless for us.
            }
            ch.params.emplace(core::ascii_lower(name), std::move(value));
            c.skip_ws();
            if (!c.end() && c.s[c.i] == ',') ++c.i;
        }
        out.push_back(std::move(ch));
    }
    return out;
}

BearerChallenge read_bearer_challenge(const std::vector<std::string>& www_authenticate) {
    BearerChallenge b;
    for (const auto& value : www_authenticate)
        for (auto& ch : parse_challenges(value)) {
            if (ch.scheme != "bearer" && ch.scheme != "dpop") continue;
            b.present = true;
            b.scheme = ch.scheme;
            b.resource_metadata = ch.param("resource_metadata");
            b.scope = ch.param("scope");
            b.error = ch.param("error");
            b.error_description = ch.param("error_description");
            return b;
        }
    return b;
}

}  // namespace switchboard::auth
