// An editor's view of a .dsp: clangd-19, given the compilation database `disparcc -MJ` writes, answers a
// hover on a VNODE's name with the VNODE's ports (docs/disparcc.md, "-MJ"). The exchange is real LSP:
// the requests framed as the protocol says, sent to clangd's standard input, its answers read back.
#include "Process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace dispar::testing {
namespace {

std::string framed(const nlohmann::json& message) {
  const std::string body = message.dump();
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

/// The answers clangd wrote, by request id.
std::vector<nlohmann::json> answers(const std::string& output) {
  std::vector<nlohmann::json> messages;
  std::size_t at = 0;
  while ((at = output.find("Content-Length: ", at)) != std::string::npos) {
    const std::size_t length = std::strtoul(output.c_str() + at + 16, nullptr, 10);
    const std::size_t body = output.find("\r\n\r\n", at);
    if (body == std::string::npos || body + 4 + length > output.size()) break;
    messages.push_back(nlohmann::json::parse(output.substr(body + 4, length), nullptr, false));
    at = body + 4 + length;
  }
  return messages;
}

TEST(Editor, HoverOnAVnodeNameShowsItsPorts) {
  ScratchDir dir;
  const std::string source = R"(#include <dispar/dispar.h>
#include <cstdio>
PIPE(long, a);
PIPE_ARRAY(long, lanes, 2);
VNODE(source, OUT(a)) { for (long v = 0; v < 10; ++v) a.write(v); }
#pragma streamap resource(cpu) replicas(2)
VNODE(split, IN(a), OUT(lanes[0]), OUT(lanes[1])) { long v; while (a.read(v)) lanes[v % 2].write(v); }
VNODE_ARRAY(lane, 2, i, IN(lanes[i])) { long v, n = 0; while (lanes[i].read(v)) n += v; std::printf("%ld\n", n); }
)";
  dir.write("app.dsp", source);
  const ProcessResult built =
      runProcess({DISPARCC_PATH, "app.dsp", "-o", "app", "-MJ", "compile_commands.json"}, dir.path());
  ASSERT_EQ(built.status, 0) << built.output;

  const std::string uri = "file://" + dir.file("app.dsp");
  // Positions are 0-based: the VNODE names on lines 5, 7 and 8.
  const auto hover = [&](int id, int line, int character) {
    return framed(
        {{"jsonrpc", "2.0"},
         {"id", id},
         {"method", "textDocument/hover"},
         {"params", {{"textDocument", {{"uri", uri}}}, {"position", {{"line", line}, {"character", character}}}}}});
  };
  std::string requests =
      framed({{"jsonrpc", "2.0"},
              {"id", 1},
              {"method", "initialize"},
              {"params",
               {{"processId", nullptr},
                {"rootUri", "file://" + dir.path()},
                {"capabilities", {{"textDocument", {{"hover", {{"contentFormat", {"plaintext"}}}}}}}}}}}) +
      framed({{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", nlohmann::json::object()}}) +
      framed(
          {{"jsonrpc", "2.0"},
           {"method", "textDocument/didOpen"},
           {"params", {{"textDocument", {{"uri", uri}, {"languageId", "cpp"}, {"version", 1}, {"text", source}}}}}}) +
      hover(2, 4, 7) + hover(3, 6, 7) + hover(4, 7, 13) +
      framed({{"jsonrpc", "2.0"}, {"id", 5}, {"method", "shutdown"}}) +
      framed({{"jsonrpc", "2.0"}, {"method", "exit"}});
  dir.write("requests", requests);
  const ProcessResult clangd =
      runProcess({"/bin/bash", "-c",
                  "clangd-19 --compile-commands-dir=. --log=error --background-index=false <requests 2>clangd.log"},
                 dir.path(), {}, 120);
  ASSERT_EQ(clangd.status, 0) << clangd.output << readFile(dir.file("clangd.log"));

  std::vector<std::string> hovers(6);
  for (const nlohmann::json& answer : answers(clangd.output)) {
    if (!answer.is_object() || !answer.contains("id") || !answer["id"].is_number_integer()) continue;
    const int id = answer["id"];
    if (id >= 2 && id <= 4 && answer.contains("result") && answer["result"].is_object())
      hovers[static_cast<std::size_t>(id)] = answer["result"]["contents"]["value"].get<std::string>();
  }
  // clangd lists the parameters one per line, then the declaration (wrapped as clang-format would).
  EXPECT_NE(hovers[2].find("function source\n"), std::string::npos) << hovers[2];
  EXPECT_NE(hovers[2].find("void source(::dispar::OUT<decltype(a)> = {})"), std::string::npos) << hovers[2];
  EXPECT_NE(hovers[3].find("function split\n"), std::string::npos) << hovers[3];
  for (const char* port :
       {"- ::dispar::IN<decltype(a)> = {} (aka PortDecl<detail::PortDirection::In, dispar::Pipe<long>>)\n",
        "- ::dispar::OUT<decltype(lanes[0])> = {}", "- ::dispar::OUT<decltype(lanes[1])> = {}"})
    EXPECT_NE(hovers[3].find(port), std::string::npos) << port << "\n" << hovers[3];
  EXPECT_NE(hovers[3].find("// In namespace dispar_vnode::L7\n"), std::string::npos) << hovers[3];
  EXPECT_NE(hovers[4].find("function lane\n"), std::string::npos) << hovers[4];
  EXPECT_NE(hovers[4].find("- const int i\n"), std::string::npos) << hovers[4];
  EXPECT_NE(hovers[4].find("- ::dispar::IN<decltype(lanes[i])> = {}"), std::string::npos) << hovers[4];
}

}  // namespace
}  // namespace dispar::testing
