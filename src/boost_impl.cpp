// Separate compilation of the header-only Boost parts: built once here instead of in every translation unit.
#include "process_v2_prelude.hpp"

#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
#include <boost/process/v2/src.hpp>
