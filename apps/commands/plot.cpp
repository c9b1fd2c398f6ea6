// `attnlab plot RUN... --out FILE.png`: training curves from runs' train_log.jsonl (a run is its
// save dir or the log file itself), one panel per metric, every run on the same axes, against
// updates or training minutes (apps/plotting/training_log.hpp).
#include <memory>
#include <set>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "apps/plotting/training_log.hpp"
#include "core/error.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

struct PlotArgs {
  std::vector<std::string> runs, labels;
  std::string out, x_axis = "updates";
  std::vector<std::string> metrics = {"loss", "ppl", "lr", "gnorm", "tokens_per_second"};
  int columns = 2;
};

int run_plot(const PlotArgs& args) {
  if (!args.labels.empty() && args.labels.size() != args.runs.size())
    throw Error(fmt::format("plot: {} --label for {} runs; give one per run or none", args.labels.size(),
                            args.runs.size()));
  std::set<std::string> named;
  for (const std::string& metric : args.metrics)
    if (!named.insert(metric).second)
      throw Error(fmt::format("plot: --metrics names {} twice; each metric is one panel", metric));
  std::vector<std::string> logs;
  for (const std::string& run : args.runs) {
    logs.push_back(plot::training_log_of(run));
    data::refuse_output_over_input(args.out, logs.back(), "a run's training log");
  }
  const std::vector<std::string> labels = args.labels.empty() ? plot::run_labels(args.runs) : args.labels;
  std::vector<plot::Run> runs;
  for (size_t i = 0; i < logs.size(); ++i) runs.push_back({labels[i], plot::read_training_log(logs[i])});
  const plot::XAxis x = args.x_axis == "minutes" ? plot::XAxis::kMinutes : plot::XAxis::kUpdates;
  const auto canvas = plot::draw_line_charts(plot::training_panels(runs, args.metrics, x), args.columns);
  plot::write_png(*canvas, args.out);
  fmt::print("wrote {} ({} runs, {} panels, {}x{} px)\n", args.out, runs.size(), args.metrics.size(), canvas->width(),
             canvas->height());
  return 0;
}

CommandAction setup_plot(CLI::App& cmd) {
  auto args = std::make_shared<PlotArgs>();
  cmd.add_option("runs", args->runs, "Save dirs (or their train_log.jsonl)")->required()->check(CLI::ExistingPath);
  cmd.add_option("--out,-o", args->out, "PNG file to write")->required();
  cmd.add_option("--label", args->labels,
                 "Legend label of each run, in order (default: the end of its path that tells it from the others)");
  cmd.add_option("--x", args->x_axis, "Horizontal axis")->check(CLI::IsMember({"updates", "minutes"}));
  cmd.add_option("--metrics", args->metrics,
                 "Panels: loss, nll_loss, ppl, lr, gnorm, tokens_per_second (comma separated)")
      ->delimiter(',');
  cmd.add_option("--columns", args->columns, "Panels per row")->check(number_in_range(1, 6));
  return [args] { return run_plot(*args); };
}

const CommandRegistration plot_command("plot", "Training curves of runs (train_log.jsonl) as a PNG", setup_plot);

}  // namespace
}  // namespace attn::app
