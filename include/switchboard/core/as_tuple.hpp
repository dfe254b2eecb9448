// The completion token that turns an Asio operation's error into a tuple element instead of an exception: the
// common case in this code base, where most errors are expected (a peer closing, a timer cancelled).
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace switchboard::core {

inline constexpr auto as_tuple_awaitable = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace switchboard::core
