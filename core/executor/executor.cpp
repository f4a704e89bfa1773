#include "core/executor/executor.h"

namespace hydra::core {

std::shared_ptr<Execution> LocalExecutor::start(boost::asio::io_context& io, ProcessSpec spec, LineHandler onLine,
                                                ExitHandler onExit, const JobLabel&) {
  return Process::start(io, std::move(spec), std::move(onLine), std::move(onExit));
}

std::shared_ptr<Executor> localExecutor() {
  static const std::shared_ptr<Executor> local = std::make_shared<LocalExecutor>();
  return local;
}

}  // namespace hydra::core
