#pragma once

// What the fuzz targets check, shared by the libFuzzer harnesses (built with
// clang, `-DHYDRA_FUZZ=ON`, scripts/fuzz.sh) and by fuzz_corpus_test, which
// replays the corpus kept in tests/fuzz/corpus/ in the normal test build.
// Each check throws Failure when hydra misbehaves; anything else it throws,
// and any sanitizer report, is a finding too.

#include <stdexcept>
#include <string_view>

namespace hydra::fuzz {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `input` as the bytes a client sends to `hydra serve`: framed (the same
// frames and errors whether it arrives whole or in pieces), validated as
// JSON-RPC and dispatched by the real server::Dispatcher to handlers bound
// with the real protocol/hydra.h param types. Everything written back must be
// well-framed, valid UTF-8 JSON-RPC, and every request must be answered.
void protocolSession(std::string_view input);

// `input` as an agent's stdout, split into lines and made UTF-8 as the race
// engine does, through the parser of `adapter` (claude, codex, cursor,
// gemini, opencode, aider, command). Every event must be well-formed, the run
// must end with exactly one Summary, and the notification and race record
// JSON the events lead to must be valid and readable back.
void adapterStream(std::string_view adapter, std::string_view input);

// `input` as what a test command prints (made UTF-8, as core::Process does)
// through every test-output parser, and as the bytes of a JUnit report. The
// counts must not be negative; test names must be UTF-8, on one line, at most
// 1000 bytes and 100000 in all; the check record holding them must be valid
// JSON that reads back the same.
void testOutput(std::string_view input);

}  // namespace hydra::fuzz
