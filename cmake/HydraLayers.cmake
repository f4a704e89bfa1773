# The layers of core/, lowest first: the folders of one layer may include
# each other and everything below, never a folder of a higher layer.
# core/CMakeLists.txt builds consecutive floors into one library whose include
# root shows nothing above them (cmake/HydraIncludeRoots.cmake), and
# cmake/check_layers.cmake holds every source of core/ to each floor before
# those libraries compile (docs/architecture.md draws the same floors).
set(HYDRA_LAYERS
  "util"
  "process git"
  "config"
  "executor guard merge sandbox"
  "adapter scoring"
  "events"
  "records"
  "run"
  "checks"
  "race"
  "collab"
  "workspace"
  "eval")

# Upward includes allowed one by one, "FILE FOLDER" each (a pair covers only
# that file's includes of that folder): none today, and a debt whenever one
# is added.
set(HYDRA_LAYER_EXCEPTIONS)
