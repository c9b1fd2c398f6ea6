// Python's statistics.mean over doubles: sacreBLEU averages its --confidence resamples with it,
// and its exact sum can differ from NumPy's pairwise one in the last bit.
#pragma once
#include <vector>

namespace attn::data {

// Python's statistics.mean of finite values of one sign: the exact sum divided by their count,
// rounded once to the nearest double (ties to even). DataError for no values or others.
double python_statistics_mean(const std::vector<double>& values);

}  // namespace attn::data
