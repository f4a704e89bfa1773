#pragma once

// Comparing what hydra sent with what a test expects: objects match when the
// actual one has every expected member (extra members are fine), arrays
// element by element, everything else by value.

#include <boost/json/value.hpp>
#include <string>

namespace hydra::test {

// Empty when `actual` matches `expected`; otherwise where they first differ.
std::string mismatch(const boost::json::value& expected, const boost::json::value& actual,
                     const std::string& path = "message");

}  // namespace hydra::test
