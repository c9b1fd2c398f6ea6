// attnlab: one binary, one subcommand per file in apps/ (see apps/command.hpp).
#include <algorithm>
#include <exception>
#include <iostream>
#include <map>

#include "apps/command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"attnlab: a from-scratch tensor engine and sequence-model toolkit for translation"};
  app.require_subcommand(1);
  auto& registry = attn::app::command_registry();
  std::sort(registry.begin(), registry.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::map<CLI::App*, attn::app::CommandAction> actions;
  for (auto& info : registry) {
    CLI::App* sub = app.add_subcommand(info.name, info.description);
    actions[sub] = info.setup(*sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const std::exception& e) {
    std::cerr << "attnlab: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
