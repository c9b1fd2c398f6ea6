// A fake rank of a 2-rank world for the tests of sharded evaluation (test_sharded_validation,
// test_bleu_validation): it records what its rank hands to the all-reduce and adds the other
// rank's recorded sums, as the all-reduce would.
#pragma once
#include <catch.hpp>

#include <string>
#include <vector>

#include "dist/communicator.hpp"

namespace attn::app::testing {

// Rank `rank` of 2: records what it is asked to sum and adds `peer` (rank 0's or 1's sums).
class ShareRecorder final : public dist::Communicator {
 public:
  explicit ShareRecorder(int rank, std::vector<double> peer = {}) : rank_(rank), peer_(std::move(peer)) {}
  std::vector<double> own;  // this rank's sums, as handed to the all-reduce

  int rank() const override { return rank_; }
  int size() const override { return 2; }
  std::string name() const override { return "recorder"; }
  void all_reduce_sum(float*, size_t) override { FAIL("no float all-reduce expected"); }
  void all_reduce_sum(double* data, size_t count) override {
    own.assign(data, data + count);
    for (size_t i = 0; i < peer_.size() && i < count; ++i) data[i] += peer_[i];
  }
  void broadcast(void*, size_t, int) override { FAIL("no broadcast expected"); }
  void barrier() override {}
  [[noreturn]] void abort(const std::string& reason, int) override { FAIL(reason); throw; }

 private:
  int rank_;
  std::vector<double> peer_;
};

}  // namespace attn::app::testing
