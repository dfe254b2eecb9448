// The gateway's operations endpoints, served beside /mcp on the same listener (transport::HttpServerOptions::
// extra_routes), behind the same Host and Origin checks:
//
//   GET /healthz  200 "ok" while the process serves (no token needed: load balancers)
//   GET /readyz   200 {"ready":true} once every enabled non-lazy server is past starting (connected, error, ...);
//                 503 {"ready":false,"starting":[names]} before (no token needed)
//   GET /metrics  Prometheus text (gateway/metrics.hpp); needs the token when one is set
//
// Thread-safety: the handlers run on the pool's executor.
#pragma once

#include <switchboard/gateway/aggregate_handler.hpp>
#include <switchboard/gateway/metrics.hpp>
#include <switchboard/http/server.hpp>

#include <memory>
#include <string>
#include <vector>

namespace switchboard::gateway {

/// The enabled, non-lazy servers still starting (idle, starting, initializing or listing), in config order.
std::vector<std::string> servers_starting(const host::ServerPool& pool);

/// The three routes. The pool and the gateway are held weakly (a stopped gateway answers 503).
http::Router ops_routes(std::weak_ptr<host::ServerPool> pool, std::weak_ptr<Gateway> gateway,
                        std::shared_ptr<Metrics> metrics);

}  // namespace switchboard::gateway
