#pragma once

// Comparing a race's scores with those of the same race run at another
// moment (alone, or beside other front ends): shared by the tests that run
// hydra's front ends side by side.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <set>
#include <string>

namespace hydra::test {

// What must not differ between a race run alone and the same race run beside
// other front ends: everything but how fast the agents were (the `speed`
// part of the score, the total and rank it feeds, every duration), what
// names the race (its id, its commits' ids) and the raw check output (it
// holds timings and addresses; its verdicts stay: exit codes, test cases,
// counts), and the keys in `alsoVarying`. Arrays are compared by agent.
boost::json::value comparable(const boost::json::value& v, const std::set<std::string>& alsoVarying = {});

// Every check that ran (the baseline's and each agent's) ran to its end:
// none reports that hydra could not run it (a gtest expectation).
void expectChecksRan(const boost::json::object& scores);

}  // namespace hydra::test
