// The command line of the benchmark programs: "--name value" pairs, lists as "a,b,c".
// Each program asks for its options by name with a default; an option it never asks for
// is an error naming it (a typo must not silently run the defaults).
#pragma once
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "core/error.hpp"

namespace attn::bench {

class BenchArgs {
 public:
  BenchArgs(std::string program, int argc, char** argv) : program_(std::move(program)) {
    for (int i = 1; i < argc; i += 2) {
      const std::string name = argv[i];
      ATTN_CHECK(name.starts_with("--") && i + 1 < argc, "{}: expected --name value pairs, got '{}'", program_, name);
      values_[name.substr(2)].push_back(argv[i + 1]);
    }
  }

  std::string text(const std::string& name, const std::string& fallback) {
    used_.insert(name);
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second.back();
  }
  // "a,b,c" (or the option repeated) -> {a, b, c}.
  std::vector<std::string> list(const std::string& name, const std::vector<std::string>& fallback) {
    used_.insert(name);
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    std::vector<std::string> parts;
    for (const std::string& value : it->second) {
      std::istringstream in(value);
      for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
    }
    return parts;
  }
  int64_t number(const std::string& name, int64_t fallback) {
    const std::string value = text(name, std::to_string(fallback));
    try {
      return std::stoll(value);
    } catch (const std::exception&) {
      throw Error(fmt::format("{}: --{} expects a number, got '{}'", program_, name, value));
    }
  }
  std::vector<int64_t> numbers(const std::string& name, const std::vector<int64_t>& fallback) {
    std::vector<std::string> defaults;
    for (int64_t v : fallback) defaults.push_back(std::to_string(v));
    std::vector<int64_t> out;
    for (const std::string& part : list(name, defaults)) {
      try {
        out.push_back(std::stoll(part));
      } catch (const std::exception&) {
        throw Error(fmt::format("{}: --{} expects numbers, got '{}'", program_, name, part));
      }
    }
    return out;
  }
  // Call after every option was read: an option nobody asked for is an error.
  void check_all_used() const {
    for (const auto& [name, value] : values_)
      ATTN_CHECK(used_.count(name), "{}: unknown option --{} (see the header comment of bench/{}.cpp)", program_, name,
                 program_);
  }

 private:
  std::string program_;
  std::map<std::string, std::vector<std::string>> values_;
  std::set<std::string> used_;
};

}  // namespace attn::bench
