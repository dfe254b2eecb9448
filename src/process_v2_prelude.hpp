// Boost 1.81's Process v2 with BOOST_PROCESS_USE_STD_FS uses boost::optional and std traits without including them;
// include this before any <boost/process/v2/...> header.
#pragma once
#include <boost/io/quoted.hpp>
#include <boost/optional.hpp>
#include <boost/type_traits/is_constructible.hpp>
#include <boost/type_traits/remove_pointer.hpp>
#include <type_traits>
