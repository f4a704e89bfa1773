// Which files define what a build command runs (core/checks/build_script.h).

#include "core/checks/build_script.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

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
  EXPECT_THAT(buildScriptPatterns("sh build.sh"), ElementsAre("/build.sh"));
  EXPECT_THAT(buildScriptPatterns("bash ./build.sh"), ElementsAre("/build.sh"));
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

TEST(BuildScriptTest, ACdMovesWhereTheFilesItNamesAreUntilItsSubshellEnds) {
  EXPECT_THAT(buildScriptPatterns("cd sub && ./build.sh"), ElementsAre("/sub/build.sh"));
  EXPECT_THAT(buildScriptPatterns("cd sub/deep; cd .. && sh tools/gen.sh"), ElementsAre("/sub/tools/gen.sh"));
  EXPECT_THAT(buildScriptPatterns("(cd sub && ./gen.sh) && ./build.sh"), ElementsAre("/build.sh", "/sub/gen.sh"));
  // Out of the repository, home or back: no file can be tied to it, while the
  // tools' own files (matched anywhere) still are.
  EXPECT_THAT(buildScriptPatterns("cd .. && ./build.sh"), IsEmpty());
  EXPECT_THAT(buildScriptPatterns("cd && ./build.sh"), IsEmpty());
  EXPECT_THAT(buildScriptPatterns("cd \"$DIR\" && make"), ElementsAre("*.mk", "GNUmakefile", "Makefile", "makefile"));
}

// A base commit's files, for the package.json scripts the command runs.
BaseFileReader filesOf(std::map<std::string, std::string> files) {
  return [files = std::move(files)](const std::string& path) -> std::optional<std::string> {
    const auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

TEST(BuildScriptTest, APackageManagersScriptIsFollowedIntoWhatTheBasesPackageJsonRuns) {
  const BaseFileReader base = filesOf({{"package.json", R"({"scripts": {
      "prebuild": "sh scripts/gen.sh",
      "build": "node check.js && npm run size",
      "postbuild": "cd tools && ./stamp.sh",
      "size": "node tools/size.js",
      "test": "node test/run.js",
      "loop": "npm run loop"}})"},
                                       {"web/package.json", R"({"scripts": {"build": "python3 make_site.py"}})"}});
  EXPECT_THAT(buildScriptPatterns("npm run build", base),
              ElementsAre("/check.js", "/scripts/gen.sh", "/tools/size.js", "/tools/stamp.sh", "package.json"));
  EXPECT_THAT(buildScriptPatterns("npm run -s build --if-present", base), testing::Contains("/check.js"));
  EXPECT_THAT(buildScriptPatterns("npm test", base), ElementsAre("/test/run.js", "package.json"));
  EXPECT_THAT(buildScriptPatterns("yarn size", base), ElementsAre("/tools/size.js", "package.json"));
  EXPECT_THAT(buildScriptPatterns("pnpm run size", base), ElementsAre("/tools/size.js", "package.json"));
  // In another package: its own package.json, its folder.
  EXPECT_THAT(buildScriptPatterns("cd web && npm run build", base), ElementsAre("/web/make_site.py", "package.json"));
  EXPECT_THAT(buildScriptPatterns("npm --prefix web run build", base),
              ElementsAre("/web/make_site.py", "package.json"));
  // A script that runs itself is followed once.
  EXPECT_THAT(buildScriptPatterns("npm run loop", base), ElementsAre("package.json"));
  // Not read: no reader, no such script, a package.json that is not JSON.
  EXPECT_THAT(buildScriptPatterns("npm run build"), ElementsAre("package.json"));
  EXPECT_THAT(buildScriptPatterns("npm run lint", base), ElementsAre("package.json"));
  EXPECT_THAT(buildScriptPatterns("npm run build", filesOf({{"package.json", "{\"scripts\": "}})),
              ElementsAre("package.json"));
}

}  // namespace
}  // namespace hydra::core::checks
