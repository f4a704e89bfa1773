// Which files define what a build command runs (core/checks/build_script.h).

#include "core/checks/build_script.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hydra::core::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(BuildScriptTest, MakeReadsItsMakefilesAndTheOneNamedWithF) {
  EXPECT_THAT(buildScriptPatterns("make -j4 all"), ElementsAre("*.mk", "GNUmakefile", "Makefile", "makefile"));
  EXPECT_THAT(buildScriptPatterns("CC=clang make -f build/rules.mk"),
              ElementsAre("*.mk", "/build/rules.mk", "GNUmakefile", "Makefile", "makefile"));
}

TEST(BuildScriptTest, AScriptRunByItsPathOrByAnInterpreterIsItself) {
  EXPECT_THAT(buildScriptPatterns("./build.sh"), ElementsAre("/build.sh"));
  EXPECT_THAT(buildScriptPatterns("bash -e 'scripts/build.sh' --release"), ElementsAre("/scripts/build.sh"));
  EXPECT_THAT(buildScriptPatterns("cd sub && npm run build"), ElementsAre("package.json"));
  EXPECT_THAT(buildScriptPatterns("cmake -B out && cmake --build out"),
              ElementsAre("*.cmake", "CMakeLists.txt", "CMakePresets.json", "CMakeUserPresets.json"));
}

TEST(BuildScriptTest, ACommandNoFileDefinesHasNoBuildScript) {
  EXPECT_THAT(buildScriptPatterns("gcc -o calc calc.c"), IsEmpty());
  EXPECT_THAT(buildScriptPatterns("python3 -m py_compile calc.py"), IsEmpty());
  EXPECT_THAT(buildScriptPatterns("sh -c 'exit 0'"), IsEmpty());
  EXPECT_THAT(buildScriptPatterns("/opt/tools/build.sh ../up.sh"), IsEmpty());
}

}  // namespace
}  // namespace hydra::core::checks
