// Header fields as the client sends them and the server answers with them: name/value pairs in order.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace switchboard::http {

using Fields = std::vector<std::pair<std::string, std::string>>;

}  // namespace switchboard::http
