// Boost.JSON compiled into this program rather than called in Debian's shared libboost_json: the parser and the
// value model sit on every message's path, and built here they are optimized with the rest (see docs/design.md,
// "Per-call cost").
#include <boost/json/src.hpp>
