# The layers of core/, lowest first: the folders of one layer may include
# each other and everything below, never a folder of a higher layer.
# cmake/check_layers.cmake holds every source of core/ to this before
# hydra_core compiles (docs/architecture.md draws the same floors).
set(HYDRA_LAYERS
  "util"
  "process git"
  "config"
  "executor guard merge sandbox"
  "adapter events scoring"
  "run"
  "checks"
  "race"
  "collab"
  "workspace"
  "eval")

# Today's upward includes, one "FILE FOLDER" pair each: debts to pay off,
# never to add to. A pair covers only that file's includes of that folder.
set(HYDRA_LAYER_EXCEPTIONS
  # Process identity reads /proc and the host name, which live higher up.
  "core/util/owner.cpp executor"
  "core/util/owner.cpp process"
  # Resource limits are parsed from hydra.toml into the process layer's type.
  "core/process/resource_limits.h config"
  # config checks names against the registries of the units that use them.
  "core/config/config.cpp adapter"
  "core/config/config.cpp checks"
  "core/config/config.cpp executor"
  "core/config/config.cpp sandbox"
  "core/config/config.cpp scoring"
  "core/config/init.cpp checks"
  "core/config/init.cpp scoring")
