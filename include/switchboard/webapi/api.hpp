// The web API (docs/api.md): the JSON routes under /api/ that the web UI uses, served by `switchboard serve` beside
// /mcp on the same listener and behind the same Host, Origin and token checks. Servers (status, live events, restart,
// enable, add/edit/remove in the config file), tools (list, call), resources (list, read), prompts (list, get),
// completion, and the chats (chat_service.hpp).
//
// Thread-safety: every handler runs on the pool's executor.
#pragma once

#include <switchboard/http/server.hpp>

#include <boost/json/object.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace switchboard::host {
class ServerPool;
}

namespace switchboard::webapi {

struct ApiOptions {
    /// Origins (besides the listener's own) whose POSTs are accepted: the gateway's --allow-origin list.
    std::vector<std::string> allowed_origins;
    bool token_required = false;  ///< said in /api/info, so that the page knows to ask
    /// Called right after the API wrote the config file, before it applies the new config: the file watcher takes
    /// note, so that it does not apply the same change a second time.
    std::function<void()> config_written;
};

class ChatService;

/// Every /api/ route. The pool is held weakly: a stopped gateway answers 503.
http::Router api_routes(std::weak_ptr<host::ServerPool> pool, std::shared_ptr<const ApiOptions> options,
                        std::shared_ptr<ChatService> chat);

}  // namespace switchboard::webapi
