// GET /api/events: the host's events as a text/event-stream, so that the UI's badges change the moment a server's
// phase does (no polling). A `servers` event with every server comes first; then one `server` event per server that
// changed (a burst of changes coalesced into its latest status), `tools`/`resources`/`prompts` when a list changed,
// `log` for a server's log messages, `resource_updated` when a subscribed resource changed, and a keep-alive comment every 15 s (which is also how a client that went away
// is noticed).
//
// Thread-safety: runs on the pool's executor; the pool's event callbacks only queue and wake the writer.
#pragma once

#include <switchboard/http/server.hpp>

#include <boost/asio/awaitable.hpp>

#include <memory>

namespace switchboard::host {
class ServerPool;
}

namespace switchboard::webapi {

/// Streams until the client goes away, the gateway stops, or the server's connections are cancelled.
boost::asio::awaitable<void> serve_events(std::weak_ptr<host::ServerPool> pool, http::Responder& res);

}  // namespace switchboard::webapi
