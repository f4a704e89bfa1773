#include "server/progress.h"

#include <atomic>

#include <spdlog/spdlog.h>

#include "protocol/methods.h"

namespace hydra::server {

namespace {
std::atomic<std::int64_t> nextToken{1};
}

std::shared_ptr<WorkDoneProgress> WorkDoneProgress::begin(Dispatcher& dispatcher,
                                                          std::optional<protocol::ProgressToken> clientToken,
                                                          bool clientCanCreate,
                                                          protocol::WorkDoneProgressBegin begin) {
  std::shared_ptr<WorkDoneProgress> p(new WorkDoneProgress(dispatcher));
  if (clientToken) {
    p->token_ = std::move(clientToken);
    p->ready_ = true;
  } else if (clientCanCreate) {
    p->token_ = protocol::ProgressToken{"hydra-progress-" + std::to_string(nextToken++)};
    // The handler holds the progress alive until the client answers: what was
    // reported meanwhile (even its end, when the work finished first) is
    // still delivered then.
    dispatcher.call(protocol::method::kWorkDoneProgressCreate,
                    json::value_from(protocol::WorkDoneProgressCreateParams{*p->token_}),
                    [self = p](const protocol::Response& response) {
                      if (response.isError()) {
                        spdlog::info("client refused a progress token: {}",
                                     std::get<protocol::ResponseError>(response.outcome).message);
                        self->failed_ = true;
                        self->held_.clear();
                        return;
                      }
                      self->ready_ = true;
                      for (auto& v : std::exchange(self->held_, {})) self->send(std::move(v));
                    });
  } else {
    return p;  // inactive: no token
  }
  p->send(json::value_from(begin));
  return p;
}

void WorkDoneProgress::report(protocol::WorkDoneProgressReport report) {
  if (!token_ || ended_) return;
  send(json::value_from(report));
}

void WorkDoneProgress::end(protocol::WorkDoneProgressEnd end) {
  if (!token_ || ended_) return;
  send(json::value_from(end));
  ended_ = true;
}

void WorkDoneProgress::send(json::value value) {
  if (failed_) return;
  if (!ready_) {
    held_.push_back(std::move(value));
    return;
  }
  if (auto d = dispatcher_.lock()) {
    d->notify(protocol::method::kProgress, json::value_from(protocol::ProgressParams{*token_, std::move(value)}));
  }
}

}  // namespace hydra::server
