#pragma once

// LSP work-done progress for long-running requests. The token is the one the
// client put in the request (`workDoneToken`), or, when the client declared
// `window.workDoneProgress`, one the server creates with
// window/workDoneProgress/create. Without either, reporting does nothing.

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "protocol/lifecycle.h"
#include "server/dispatcher.h"

namespace hydra::server {

class WorkDoneProgress : public std::enable_shared_from_this<WorkDoneProgress> {
 public:
  // io thread only, like every method here.
  static std::shared_ptr<WorkDoneProgress> begin(Dispatcher& dispatcher,
                                                 std::optional<protocol::ProgressToken> clientToken,
                                                 bool clientCanCreate, protocol::WorkDoneProgressBegin begin);

  void report(protocol::WorkDoneProgressReport report);
  void end(protocol::WorkDoneProgressEnd end);

  const std::optional<protocol::ProgressToken>& token() const { return token_; }
  bool active() const { return token_.has_value() && !ended_; }

 private:
  WorkDoneProgress(Dispatcher& dispatcher) : dispatcher_(dispatcher.weak_from_this()) {}
  void send(json::value value);

  std::weak_ptr<Dispatcher> dispatcher_;
  std::optional<protocol::ProgressToken> token_;
  bool ready_ = false;  // the client accepted the token
  bool ended_ = false;
  bool failed_ = false;
  std::vector<json::value> held_;  // reports made before the client's answer
};

}  // namespace hydra::server
