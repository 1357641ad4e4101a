#include <dispar/gpu/MapFile.h>

#include "dispar_lang/JsonRead.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dispar::gpu {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("mapping file '" + path + "': " + what);
}

const json& member(const json& object, const char* key, const std::string& where, const std::string& path) {
  const auto found = object.find(key);
  if (found == object.end()) fail(path, where + ": missing \"" + key + "\"");
  return *found;
}

std::string stringField(const json& object, const char* key, const std::string& where, const std::string& path) {
  const json& value = member(object, key, where, path);
  if (!value.is_string()) fail(path, where + "." + key + ": expected a string");
  return value.get<std::string>();
}

}  // namespace

const MappedRank* MapFile::instance(const std::string& vnode, int replica) const {
  for (const MappedRank& entry : ranks)
    if (entry.vnode == vnode && entry.replica == replica) return &entry;
  return nullptr;
}

MapFile parseMapFile(const std::string& text, const std::string& path) {
  json doc;
  std::string error;
  // A number beyond double range is named by its field ("ranks[3].time: number out of range, got 1e999").
  if (!dispar::lang::parseJson(text, doc, error)) fail(path, "not valid JSON: " + error);
  if (!doc.is_object()) fail(path, "expected a JSON object");
  if (stringField(doc, "format", "map", path) != "dispar-map") fail(path, "map.format: expected \"dispar-map\"");
  const json& ranks = member(doc, "ranks", "map", path);
  if (!ranks.is_array()) fail(path, "map.ranks: expected an array");
  MapFile map;
  map.path = path;
  if (const auto program = doc.find("program"); program != doc.end()) {
    if (!program->is_string()) fail(path, "map.program: expected a string");
    map.program = program->get<std::string>();
  }
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    MappedRank rank;
    std::string error;
    if (!lang::readMapRank(ranks[i], "ranks[" + std::to_string(i) + "]", rank, error)) fail(path, error);
    map.ranks.push_back(std::move(rank));
  }
  if (const std::string layout = lang::checkRankLayout(map.ranks, "ranks"); !layout.empty()) fail(path, layout);
  if (std::string error; !lang::readDemandPipes(doc, "map", map.demandPipes, error)) fail(path, error);
  return map;
}

MapFile readMapFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parseMapFile(text.str(), path);
}

MapFileLocation locateMapFile(const char* explicitPath, const std::string& binaryPath) {
  if (explicitPath != nullptr && *explicitPath != '\0') return {explicitPath, true};
  return {binaryPath + ".map.json", false};
}

std::optional<MapFile> loadRunningMapFile() {
  std::error_code error;
  const std::filesystem::path binary = std::filesystem::read_symlink("/proc/self/exe", error);
  const MapFileLocation location =
      locateMapFile(std::getenv("DISPAR_MAPPING"), error ? std::string() : binary.string());
  if (!location.required && (error || !std::filesystem::exists(location.path, error))) return std::nullopt;
  return readMapFile(location.path);
}

}  // namespace dispar::gpu
