#include "server/workspace_folder.h"

#include <gtest/gtest.h>


namespace hydra::server {
namespace {

TEST(WorkspaceFolderTest, FileUrisBecomeLocalPathsWithEscapesDecoded) {
  EXPECT_EQ(pathFromFileUri("file:///home/ana/my%20repo"),
            std::filesystem::path("/home/ana/my repo"));
  EXPECT_EQ(pathFromFileUri("file://localhost/srv/r%C3%A9po"),
            std::filesystem::path("/srv/r\xC3\xA9po"));
  EXPECT_EQ(pathFromFileUri("FILE:///tmp/x"), std::filesystem::path("/tmp/x"));
  EXPECT_EQ(pathFromFileUri("file:///tmp/x?query#fragment"), std::filesystem::path("/tmp/x"));
}

TEST(WorkspaceFolderTest, UrisThatNameNoLocalPathAreRefused) {
  EXPECT_FALSE(pathFromFileUri("https://example.com/repo"));
  EXPECT_FALSE(pathFromFileUri("file://otherhost/repo"));
  EXPECT_FALSE(pathFromFileUri("file:relative"));
  EXPECT_FALSE(pathFromFileUri("file:///bad%2"));
  EXPECT_FALSE(pathFromFileUri("file:///bad%zz"));
  EXPECT_FALSE(pathFromFileUri("file:///nul%00byte"));
}

TEST(WorkspaceFolderTest, TheRootUriNamesTheFolder) {
  protocol::InitializeParams params;
  params.rootUri = "file:///home/ana/shop%20front";
  params.rootPath = "/elsewhere";
  WorkspaceFolder w = workspaceFolder(params);
  EXPECT_EQ(w.path, std::filesystem::path("/home/ana/shop front"));
  EXPECT_TRUE(w.problem.empty());
}

TEST(WorkspaceFolderTest, WithoutARootUriTheRootPathOrTheWorkingDirectoryIsTheFolder) {
  protocol::InitializeParams params;
  params.rootPath = "/srv/repo";
  EXPECT_EQ(workspaceFolder(params).path, std::filesystem::path("/srv/repo"));
  EXPECT_EQ(workspaceFolder(protocol::InitializeParams{}).path, std::filesystem::current_path());
}

TEST(WorkspaceFolderTest, ARootUriThatIsNotAFileUriIsAProblemNotACrash) {
  protocol::InitializeParams params;
  params.rootUri = "untitled:Untitled-1";
  WorkspaceFolder w = workspaceFolder(params);
  EXPECT_EQ(w.problem, "rootUri is not a local file:// URI");
}

}  // namespace
}  // namespace hydra::server
