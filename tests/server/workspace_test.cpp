#include "server/workspace.h"

#include <gtest/gtest.h>

#include "core/git/git.h"

namespace hydra::server {
namespace {

TEST(WorkspaceTest, FileUrisBecomeLocalPathsWithEscapesDecoded) {
  EXPECT_EQ(pathFromFileUri("file:///home/ana/my%20repo"),
            std::filesystem::path("/home/ana/my repo"));
  EXPECT_EQ(pathFromFileUri("file://localhost/srv/r%C3%A9po"),
            std::filesystem::path("/srv/r\xC3\xA9po"));
  EXPECT_EQ(pathFromFileUri("FILE:///tmp/x"), std::filesystem::path("/tmp/x"));
  EXPECT_EQ(pathFromFileUri("file:///tmp/x?query#fragment"), std::filesystem::path("/tmp/x"));
}

TEST(WorkspaceTest, UrisThatNameNoLocalPathAreRefused) {
  EXPECT_FALSE(pathFromFileUri("https://example.com/repo"));
  EXPECT_FALSE(pathFromFileUri("file://otherhost/repo"));
  EXPECT_FALSE(pathFromFileUri("file:relative"));
  EXPECT_FALSE(pathFromFileUri("file:///bad%2"));
  EXPECT_FALSE(pathFromFileUri("file:///bad%zz"));
  EXPECT_FALSE(pathFromFileUri("file:///nul%00byte"));
}

TEST(WorkspaceTest, AFolderOutsideAnyRepositoryHasNoRootAndSaysWhy) {
  core::git::LibGit2 libgit2;
  protocol::InitializeParams params;
  params.rootUri = "file:///proc/self";
  Workspace w = locateWorkspace(params);
  EXPECT_EQ(w.folder, std::filesystem::path("/proc/self"));
  EXPECT_FALSE(w.root);
  EXPECT_FALSE(w.problem.empty());
}

TEST(WorkspaceTest, ARootUriThatIsNotAFileUriIsAProblemNotACrash) {
  protocol::InitializeParams params;
  params.rootUri = "untitled:Untitled-1";
  Workspace w = locateWorkspace(params);
  EXPECT_FALSE(w.root);
  EXPECT_EQ(w.problem, "rootUri is not a local file:// URI");
}

}  // namespace
}  // namespace hydra::server
