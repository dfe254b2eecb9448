// The http library's client options from a transport's (private to the transport layer).
#pragma once

#include <switchboard/http/client.hpp>
#include <switchboard/transport/http_client.hpp>

namespace switchboard::transport {

inline http::ClientOptions client_options(const HttpClientOptions& o) {
    http::ClientOptions out;
    out.server_name = o.server_name;
    out.headers = o.headers;
    out.max_body_size = o.max_message_size;
    out.connect_timeout = o.connect_timeout;
    out.read_timeout = o.read_timeout;
    out.ca_file = o.ca_file;
    out.max_redirects = o.max_redirects;
    out.authorizer = o.authorizer;
    return out;
}

}  // namespace switchboard::transport
