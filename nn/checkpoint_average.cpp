// Checkpoint averaging (docs/models.md §1.11). See checkpoint_average.hpp.
#include "nn/checkpoint_average.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace attn::nn {
namespace {

// Floating tensors are summed in float64, integer and BOOL ones in int64.
DType sum_dtype(DType dtype) { return is_floating(dtype) ? DType::Float64 : DType::Int64; }

template <typename T>
void add_into(Tensor& sum, const Tensor& value) {
  const Tensor v = value.to(sum.dtype()).contiguous();
  T* s = sum.data<T>();
  const T* x = v.data<T>();
  for (int64_t i = 0; i < sum.numel(); ++i) s[i] += x[i];
}

void add_into(Tensor& sum, const Tensor& value) {
  if (sum.dtype() == DType::Float64)
    add_into<double>(sum, value);
  else
    add_into<int64_t>(sum, value);
}

// Σ/N, with integer sums floor-divided (toward −∞, as Python's //).
Tensor mean_of_sum(Tensor sum, int64_t n, DType dtype) {
  if (sum.dtype() == DType::Float64) {
    double* s = sum.data<double>();
    for (int64_t i = 0; i < sum.numel(); ++i) s[i] /= double(n);
  } else {
    int64_t* s = sum.data<int64_t>();
    for (int64_t i = 0; i < sum.numel(); ++i) s[i] = s[i] / n - ((s[i] % n != 0 && s[i] < 0) ? 1 : 0);
  }
  return sum.to(dtype);
}

std::string leaf_of(const std::string& name) { return name.substr(name.rfind('.') + 1); }

// Fixed random draws (nn/mixers/kernel/random_feature_map.hpp): equal in every checkpoint of a
// run, copied rather than averaged.
bool is_fixed_draw(const std::string& name) { return leaf_of(name) == "random_matrices"; }

// Counters of training draws: they differ between checkpoints and mean nothing averaged; the
// first checkpoint's is copied.
bool is_draw_counter(const std::string& name) { return leaf_of(name) == "random_feature_draws"; }

bool same_values(const Tensor& a, const Tensor& b) { return a.to_vector() == b.to_vector(); }

void check_same_names(const SafetensorsFile& first, const SafetensorsFile& other) {
  for (const auto& [name, t] : first.tensors)
    ATTN_CHECK(other.contains(name), "average: {} has no tensor '{}' (present in {})", other.path, name, first.path);
  for (const auto& [name, t] : other.tensors)
    ATTN_CHECK(first.contains(name), "average: {} has a tensor '{}' that {} lacks", other.path, name, first.path);
}

// A diverged run's checkpoint (NaN or infinite weights) would turn the average into NaN.
void check_finite(const SafetensorsFile& file) {
  for (const auto& [name, t] : file.tensors) {
    if (!is_floating(t.dtype())) continue;
    const std::vector<double> values = t.to_vector();
    ATTN_CHECK(std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }),
               "average: tensor '{}' of {} holds NaN or infinite values (a diverged run?); the average would too",
               name, file.path);
  }
}

}  // namespace

SafetensorsFile average_checkpoints(const std::vector<std::string>& inputs) {
  ATTN_CHECK(!inputs.empty(), "average: no checkpoints given");
  const SafetensorsFile first = load_safetensors(inputs.front());
  check_finite(first);
  SafetensorsFile result{.path = "", .tensors = {}, .metadata = first.metadata};
  NamedTensors sums;
  for (const auto& [name, t] : first.tensors) sums.emplace_back(name, t.to(sum_dtype(t.dtype())).clone());

  for (size_t f = 1; f < inputs.size(); ++f) {
    const SafetensorsFile other = load_safetensors(inputs[f]);
    check_same_names(first, other);
    check_finite(other);
    for (size_t i = 0; i < sums.size(); ++i) {
      const auto& [name, reference] = first.tensors[i];
      const Tensor& t = other.at(name);
      ATTN_CHECK(t.dtype() == reference.dtype() && t.shape() == reference.shape(),
                 "average: tensor '{}' is {} {} in {} but {} {} in {}", name, dtype_name(t.dtype()), t.shape().str(),
                 other.path, dtype_name(reference.dtype()), reference.shape().str(), first.path);
      if (is_draw_counter(name)) continue;
      if (!is_fixed_draw(name)) {
        add_into(sums[i].second, t);
        continue;
      }
      ATTN_CHECK(same_values(t, reference),
                 "average: '{}' (fixed random features) differs between {} and {}; these checkpoints come from "
                 "different runs and cannot be averaged",
                 name, first.path, other.path);
    }
  }
  for (size_t i = 0; i < sums.size(); ++i) {
    const auto& [name, reference] = first.tensors[i];
    result.tensors.emplace_back(name, is_fixed_draw(name) || is_draw_counter(name) ? reference
                                                          : mean_of_sum(sums[i].second, int64_t(inputs.size()),
                                                                        reference.dtype()));
  }
  return result;
}

void average_checkpoints(const std::vector<std::string>& inputs, const std::string& output) {
  const SafetensorsFile averaged = average_checkpoints(inputs);
  save_safetensors(output, averaged.tensors, averaged.metadata);
}

std::vector<std::string> last_checkpoints(const std::string& dir, int n, CheckpointNumbering numbering,
                                          const std::string& extension) {
  ATTN_CHECK(n > 0, "average: the number of checkpoints must be > 0, got {}", n);
  std::vector<NumberedCheckpoint> found;
  try {
    found = numbered_checkpoints(dir, numbering, extension);
  } catch (const Error& e) {
    throw Error(fmt::format("average: {}", e.what()));
  }
  const char* pattern = numbering == CheckpointNumbering::Epoch ? "checkpoint<epoch>" : "checkpoint_<epoch>_<update>";
  ATTN_CHECK(int64_t(found.size()) >= n, "average: found {} files named {}{} in {} but need {}", found.size(), pattern,
             extension, dir, n);
  std::vector<std::string> newest;
  for (int i = 0; i < n; ++i) newest.push_back(found[size_t(i)].path);
  return newest;
}

}  // namespace attn::nn
