// An attnlab optimizer's state as fairseq's. See fairseq_optimizer_state.hpp.
#include "apps/interop/fairseq_optimizer_state.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string_view>
#include <tuple>

#include <fmt/core.h>

#include "core/error.hpp"
#include "nn/nag.hpp"
#include "nn/optimizer.hpp"

namespace attn::app {
namespace {

using data::PickleRef;

// The modules of an encoder or decoder layer of fairseq's transformer and lightconv models in
// the order their constructors assign them (TransformerEncoderLayer, TransformerDecoderLayer,
// LightConvEncoderLayer, LightConvDecoderLayer; MultiheadAttention assigns k, v, q, out). An
// entry ending in '.' is a module; the others are a conv's own parameters, which PyTorch lists
// before its child weight_linear.
// clang-format off
constexpr std::string_view kLayerOrder[] = {
    "self_attn.k_proj.", "self_attn.v_proj.", "self_attn.q_proj.", "self_attn.out_proj.", "self_attn_layer_norm.",
    "linear1.", "conv.weight", "conv.bias", "conv.conv_bias", "conv.weight_linear.", "linear2.", "conv_layer_norm.",
    "encoder_attn.k_proj.", "encoder_attn.v_proj.", "encoder_attn.q_proj.", "encoder_attn.out_proj.",
    "encoder_attn_layer_norm.",
    "fc1.", "fc2.", "layer_norm1.", "layer_norm2.", "final_layer_norm."};
// clang-format on

// "encoder.layers.3." of "encoder.layers.3.fc1.weight"; empty outside the layers.
std::string layer_prefix(const std::string& name) {
  for (const std::string_view stack : {"encoder.layers.", "decoder.layers."}) {
    if (!name.starts_with(stack)) continue;
    const size_t dot = name.find('.', stack.size());
    if (dot != std::string::npos) return name.substr(0, dot + 1);
  }
  return {};
}

size_t rank_in_layer(const std::string& name, const std::string& prefix) {
  const std::string_view rest = std::string_view(name).substr(prefix.size());
  for (size_t rank = 0; rank < std::size(kLayerOrder); ++rank) {
    const std::string_view entry = kLayerOrder[rank];
    if (entry.ends_with('.') ? rest.starts_with(entry) : rest == entry) return rank;
  }
  throw Error(fmt::format("export-fairseq: no place known for {} among the parameters of fairseq's layers", name));
}

// attnlab's (and fairseq's command line's) names and fairseq's classes.
constexpr std::pair<std::string_view, std::string_view> kCriteria[] = {
    {"label_smoothed_cross_entropy", "LabelSmoothedCrossEntropyCriterion"}, {"cross_entropy", "CrossEntropyCriterion"}};
constexpr std::pair<std::string_view, std::string_view> kOptimizers[] = {{"adam", "FairseqAdam"},
                                                                         {"nag", "FairseqNAG"}};

bool is_buffer(const std::string& name) {
  return name.ends_with(".version") || name.ends_with("._float_tensor");
}

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.shares_storage(b) && a.offset() == b.offset() && a.shape() == b.shape() && a.strides() == b.strides();
}

// The state entry `slot` of a parameter under whichever of its attnlab names the optimizer used;
// none when it has no such entry.
const Tensor* find_state(const FairseqOptimizerSource& source, const FairseqParameter& parameter,
                         const std::string& slot) {
  for (const std::string& name : parameter.attnlab_names)
    if (const auto it = source.state.find(nn::optimizer_state_key(name, slot)); it != source.state.end())
      return &it->second;
  return nullptr;
}

// A float32 slot of the parameter's shape; throws when a parameter attnlab trains has none.
const Tensor& slot_state(const FairseqOptimizerSource& source, const FairseqParameter& parameter,
                         const std::string& slot) {
  const Tensor* state = find_state(source, parameter, slot);
  ATTN_CHECK(state, "export-fairseq: the optimizer state has no {} of {}", slot, parameter.attnlab_names.front());
  ATTN_CHECK(state->dtype() == DType::Float32 && state->shape() == parameter.shape,
             "export-fairseq: the optimizer's {} of {} is {} {}, the weight {}", slot, parameter.attnlab_names.front(),
             dtype_name(state->dtype()), state->shape().str(), parameter.shape.str());
  return *state;
}

double option(const FairseqOptimizerSource& source, const char* key) {
  const auto it = source.options.find(key);
  ATTN_CHECK(it != source.options.end() && it->is_number(),
             "export-fairseq: the checkpoint's optimizer_options have no number '{}'", key);
  return it->get<double>();
}

PickleRef parameter_numbers(size_t count) {
  std::vector<PickleRef> numbers;
  for (size_t i = 0; i < count; ++i) numbers.push_back(data::pickle_int(int64_t(i)));
  return data::pickle_list(std::move(numbers));
}

PickleRef key(const char* name) {
  return data::pickle_string(name);
}

// Adam's state (fairseq/optim/adam.py): per parameter it stepped, its step count and moments.
PickleRef adam_state(const FairseqOptimizerSource& source, const std::vector<FairseqParameter>& parameters,
                     TorchFileWriter& file) {
  std::vector<std::pair<PickleRef, PickleRef>> state;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].attnlab_names.empty()) continue;
    const Tensor* step = find_state(source, parameters[i], "step");
    ATTN_CHECK(step && step->dtype() == DType::Int64 && step->numel() == 1,
               "export-fairseq: the optimizer state has no step count of {}", parameters[i].attnlab_names.front());
    const int64_t steps = *step->data<int64_t>();
    if (steps == 0) continue;  // fairseq creates the state at a parameter's first step
    state.emplace_back(
        data::pickle_int(int64_t(i)),
        data::pickle_dict({{key("step"), data::pickle_int(steps)},
                           {key("exp_avg"), file.tensor(slot_state(source, parameters[i], "exp_avg"))},
                           {key("exp_avg_sq"), file.tensor(slot_state(source, parameters[i], "exp_avg_sq"))}}));
  }
  const auto betas = source.options.find("adam_betas");
  ATTN_CHECK(betas != source.options.end() && betas->is_array() && betas->size() == 2 && (*betas)[0].is_number() &&
                 (*betas)[1].is_number(),
             "export-fairseq: the checkpoint's optimizer_options have no adam_betas pair");
  const PickleRef group =
      data::pickle_dict({{key("lr"), data::pickle_float(source.lr)},
                         {key("betas"), data::pickle_tuple({data::pickle_float((*betas)[0].get<double>()),
                                                            data::pickle_float((*betas)[1].get<double>())})},
                         {key("eps"), data::pickle_float(option(source, "adam_eps"))},
                         {key("weight_decay"), data::pickle_float(option(source, "weight_decay"))},
                         {key("amsgrad"), data::pickle_bool(false)},
                         {key("params"), parameter_numbers(parameters.size())}});
  return data::pickle_dict(
      {{key("state"), data::pickle_dict(std::move(state))}, {key("param_groups"), data::pickle_list({group})}});
}

// NAG's state (fairseq/optim/nag.py): the momentum buffers once it stepped, lr_old in the group.
PickleRef nag_state(const FairseqOptimizerSource& source, const std::vector<FairseqParameter>& parameters,
                    TorchFileWriter& file) {
  const auto lr_old = source.state.find(nn::NAG::kLrOldKey);
  std::vector<std::pair<PickleRef, PickleRef>> state;
  if (lr_old != source.state.end())  // absent before the first step, as fairseq's buffers
    for (size_t i = 0; i < parameters.size(); ++i)
      if (!parameters[i].attnlab_names.empty())
        state.emplace_back(data::pickle_int(int64_t(i)),
                           data::pickle_dict({{key("momentum_buffer"),
                                               file.tensor(slot_state(source, parameters[i], "momentum_buffer"))}}));
  const double old_lr = lr_old != source.state.end() ? *lr_old->second.to(DType::Float64).data<double>() : source.lr;
  const PickleRef group = data::pickle_dict({{key("lr"), data::pickle_float(source.lr)},
                                             {key("lr_old"), data::pickle_float(old_lr)},
                                             {key("momentum"), data::pickle_float(option(source, "momentum"))},
                                             {key("weight_decay"), data::pickle_float(option(source, "weight_decay"))},
                                             {key("params"), parameter_numbers(parameters.size())}});
  return data::pickle_dict(
      {{key("state"), data::pickle_dict(std::move(state))}, {key("param_groups"), data::pickle_list({group})}});
}

// ---- import: fairseq's state as attnlab's ----

// A number of the pickle (fairseq writes 0 for a float setting as an int at times).
double pickled_number(const data::PickleRef& value, const std::string& what) {
  ATTN_CHECK(value && (value->is(data::PickleValue::Kind::Float) || value->is(data::PickleValue::Kind::Int)),
             "import-fairseq: {} is not a number", what);
  return value->is(data::PickleValue::Kind::Float) ? value->number : double(value->integer);
}

data::PickleRef required(const data::PickleValue& parent, const char* key, const std::string& what) {
  data::PickleRef value = parent.find(key);
  ATTN_CHECK(value, "import-fairseq: {} has no '{}'", what, key);
  return value;
}

// Adam's settings from its parameter group (betas, eps, weight decay; AMSGrad refused).
nlohmann::json adam_options(const data::PickleValue& group, const std::string& what) {
  const data::PickleRef betas = required(group, "betas", what);
  ATTN_CHECK(betas->items.size() == 2, "import-fairseq: {}'s betas are not a pair", what);
  const data::PickleRef amsgrad = group.find("amsgrad");
  ATTN_CHECK(!amsgrad || !amsgrad->boolean,
             "import-fairseq: {} is AMSGrad's state (--amsgrad), which attnlab's Adam does not keep", what);
  return {{"adam_betas", {pickled_number(betas->items[0], what + " betas"), pickled_number(betas->items[1], what)}},
          {"adam_eps", pickled_number(required(group, "eps", what), what + " eps")},
          {"weight_decay", pickled_number(required(group, "weight_decay", what), what + " weight_decay")}};
}

nlohmann::json nag_options(const data::PickleValue& group, const std::string& what) {
  return {{"momentum", pickled_number(required(group, "momentum", what), what + " momentum")},
          {"weight_decay", pickled_number(required(group, "weight_decay", what), what + " weight_decay")}};
}

// The step count fairseq's Adam keeps as an int (torch's own Adam as a 0-d tensor).
int64_t step_count(const TorchFile& file, const data::PickleRef& step, const std::string& what) {
  ATTN_CHECK(step, "import-fairseq: {} has no step", what);
  if (step->is(data::PickleValue::Kind::Int)) return step->integer;
  ATTN_CHECK(TorchFile::is_tensor(*step) && file.tensor(*step, what).numel() == 1,
             "import-fairseq: {}'s step is not a count", what);
  return int64_t(file.tensor(*step, what).to_vector().front());
}

}  // namespace

std::string fairseq_criterion_class(const std::string& criterion) {
  for (const auto& [name, fairseq] : kCriteria)
    if (name == criterion) return std::string(fairseq);
  throw Error(fmt::format("export-fairseq: no fairseq criterion for '{}'", criterion));
}

ImportedOptimizerState imported_optimizer_state(const TorchFile& file, const std::string& path,
                                                const std::vector<FairseqParameter>& parameters,
                                                const NamedTensors& trainable) {
  const data::PickleValue& root = file.root();
  const data::PickleRef last = root.find("last_optimizer_state");
  ATTN_CHECK(last && last->is(data::PickleValue::Kind::Dict),
             "import-fairseq --with-optimizer-state: {} holds no optimizer state (a model archive, or saved with "
             "--no-save-optimizer-state)",
             path);
  const data::PickleRef histories = root.find("optimizer_history");
  ATTN_CHECK(histories && !histories->items.empty(), "import-fairseq: {} has no optimizer_history", path);
  const data::PickleValue& history = *histories->items.back();
  ImportedOptimizerState imported;
  const std::string optimizer = required(history, "optimizer_name", path + "'s optimizer_history")->text;
  for (const auto& [name, fairseq] : kOptimizers)
    if (fairseq == optimizer) imported.name = name;
  ATTN_CHECK(!imported.name.empty(),
             "import-fairseq --with-optimizer-state: {} holds the state of {}, which attnlab has no counterpart of "
             "(FairseqAdam, FairseqNAG; fp16 training keeps its own flattened state)",
             path, optimizer);
  const std::string criterion = required(history, "criterion_name", path + "'s optimizer_history")->text;
  for (const auto& [name, fairseq] : kCriteria)
    if (fairseq == criterion) imported.criterion = name;
  imported.num_updates = int64_t(pickled_number(required(history, "num_updates", path), path + " num_updates"));

  const std::string what = path + "'s optimizer parameter group";
  const data::PickleRef groups = required(*last, "param_groups", path + "'s last_optimizer_state");
  ATTN_CHECK(groups->items.size() == 1, "import-fairseq: {} has {} parameter groups; fairseq's trainer makes one", path,
             groups->items.size());
  const data::PickleValue& group = *groups->items.front();
  ATTN_CHECK(required(group, "params", what)->items.size() == parameters.size(),
             "import-fairseq: {} numbers {} parameters, the model has {} (fairseq's model.parameters())", path,
             required(group, "params", what)->items.size(), parameters.size());
  imported.lr = pickled_number(required(group, "lr", what), what + " lr");
  imported.options = imported.name == "adam" ? adam_options(group, what) : nag_options(group, what);

  std::map<std::string, const data::PickleValue*> by_name;  // fairseq's state per attnlab parameter name
  for (const auto& [number, entry] : required(*last, "state", path + "'s last_optimizer_state")->entries) {
    ATTN_CHECK(
        number->is(data::PickleValue::Kind::Int) && number->integer >= 0 && size_t(number->integer) < parameters.size(),
        "import-fairseq: {}'s optimizer state has an entry for no parameter", path);
    for (const std::string& name : parameters[size_t(number->integer)].attnlab_names) by_name[name] = entry.get();
  }
  NamedTensors steps;  // after the slots, as nn::Optimizer::state_dict() orders them
  for (const auto& [name, parameter] : trainable) {
    const auto found = by_name.find(name);
    const data::PickleValue* entry = found == by_name.end() ? nullptr : found->second;
    const std::string entry_name = fmt::format("{}'s optimizer state of {}", path, name);
    auto slot = [&](const char* slot_name) {
      if (!entry) return zeros(parameter.shape());
      Tensor value = file.tensor(*required(*entry, slot_name, entry_name), entry_name + " " + slot_name);
      ATTN_CHECK(value.shape() == parameter.shape(), "import-fairseq: {} {} is {}, the weight {}", entry_name,
                 slot_name, value.shape().str(), parameter.shape().str());
      return value;
    };
    if (imported.name == "adam") {
      imported.state.emplace_back(nn::optimizer_state_key(name, "exp_avg"), slot("exp_avg"));
      imported.state.emplace_back(nn::optimizer_state_key(name, "exp_avg_sq"), slot("exp_avg_sq"));
      steps.emplace_back(
          nn::optimizer_state_key(name, "step"),
          from_vector<int64_t>({entry ? step_count(file, entry->find("step"), entry_name) : 0}, Shape{}));
    } else {
      imported.state.emplace_back(nn::optimizer_state_key(name, "momentum_buffer"), slot("momentum_buffer"));
    }
  }
  imported.state.insert(imported.state.end(), steps.begin(), steps.end());
  if (imported.name == "nag")
    if (const data::PickleRef lr_old = group.find("lr_old"))
      imported.state.emplace_back(nn::NAG::kLrOldKey,
                                  from_vector<double>({pickled_number(lr_old, what + " lr_old")}, Shape{}));
  return imported;
}

std::vector<FairseqParameter> fairseq_parameters(const std::vector<ExportedTensor>& tensors) {
  // Sort key: a layer's weights stay where its first one is and take fairseq's order inside it;
  // the others keep their place (the state dict's order is fairseq's outside the layers).
  std::vector<std::tuple<size_t, size_t, size_t>> keys;
  std::vector<size_t> kept;
  std::map<std::string, size_t> layer_start;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string& name = tensors[i].fairseq_name;
    if (is_buffer(name)) continue;
    const std::string prefix = layer_prefix(name);
    if (prefix.empty()) {
      keys.emplace_back(i, 0, i);
    } else {
      const size_t start = layer_start.emplace(prefix, i).first->second;
      keys.emplace_back(start, rank_in_layer(name, prefix), i);
    }
    kept.push_back(i);
  }
  std::vector<size_t> order(kept.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });

  std::vector<FairseqParameter> parameters;
  std::vector<const Tensor*> parameter_tensors;
  for (const size_t k : order) {
    const ExportedTensor& exported = tensors[kept[k]];
    size_t p = 0;
    while (p < parameters.size() && !same_tensor(*parameter_tensors[p], exported.tensor)) ++p;
    if (p == parameters.size()) {
      parameters.push_back({exported.fairseq_name, exported.tensor.shape(), {}});
      parameter_tensors.push_back(&exported.tensor);
    }
    if (!exported.attnlab_name.empty()) parameters[p].attnlab_names.push_back(exported.attnlab_name);
  }
  return parameters;
}

FairseqOptimizerState fairseq_optimizer_state(const FairseqOptimizerSource& source,
                                              const std::vector<FairseqParameter>& parameters, TorchFileWriter& file) {
  for (const auto& [name, fairseq] : kOptimizers)
    if (name == source.name)
      return {std::string(fairseq),
              name == "adam" ? adam_state(source, parameters, file) : nag_state(source, parameters, file)};
  throw Error(fmt::format("export-fairseq: no fairseq optimizer for attnlab's '{}'", source.name));
}

}  // namespace attn::app
