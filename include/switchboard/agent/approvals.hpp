// Which tool calls may run without asking. A conversation remembers the user's "always for this tool" and "always for
// this server" answers; `--allow-tools PATTERN` (globs over exposed names) and `--yes` come from the command line.
// A call that is not allowed is put to the front end (chat asks), or denied when nobody can be asked (`run`), and the
// model is told so.
//
// One object per conversation tree: a fork (agent/fork.hpp) shares its parent conversation's object rather than a
// copy, so an "always" given anywhere in the tree counts everywhere in it at once, and is stored with the
// conversation. A fork's "always for this tool" is remembered as `server__tool` (its exposed names are its own
// context's, not the parent's); the parent's exposed names still count in a fork, as they did when copied.
//
// Thread-safety: plain values (shared on one executor).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::agent {

enum class Decision { allow_once, always_tool, always_server, deny };

struct Approvals {
    std::set<std::string> tools;        ///< exposed names or `server__tool`, remembered per conversation
    std::set<std::string> servers;      ///< remembered per conversation
    std::vector<std::string> patterns;  ///< --allow-tools globs over exposed names (and `server__tool`)
    bool all = false;                   ///< --yes

    bool allows(std::string_view exposed_name, std::string_view server, std::string_view tool) const;
    /// Remembers an "always" decision (once and deny are not remembered) under `name` (an exposed name, or the
    /// `server__tool` a fork remembers).
    void remember(Decision d, std::string_view name, std::string_view server);
};

}  // namespace switchboard::agent
