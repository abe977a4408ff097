// Interleaved timing: who runs when, and the speed-up taken round by round.
#include "seam/runtime/measure.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// A contestant that logs its name and "takes" the given seconds.
TimedRun Logged(std::string name, double seconds, std::string& log) {
  return [name, seconds, &log]() -> absl::StatusOr<double> {
    log += name;
    return seconds;
  };
}

TEST(TimeInterleaved, EveryRoundRunsEachOnceStartingFromTheNextOne) {
  std::string log;
  std::vector<TimedRun> runs = {Logged("a", 1, log), Logged("b", 2, log), Logged("c", 3, log)};
  absl::StatusOr<std::vector<std::vector<double>>> seconds = TimeInterleaved(runs, 4);
  ASSERT_TRUE(seconds.ok()) << seconds.status();
  EXPECT_EQ(log, "abc" "bca" "cab" "abc");
  ASSERT_EQ(seconds->size(), 3u);
  EXPECT_EQ((*seconds)[0], std::vector<double>(4, 1.0));
  EXPECT_EQ((*seconds)[1], std::vector<double>(4, 2.0));
  EXPECT_EQ((*seconds)[2], std::vector<double>(4, 3.0));
}

TEST(TimeInterleaved, AFailingRunStopsTheTiming) {
  int calls = 0;
  std::vector<TimedRun> runs = {[&]() -> absl::StatusOr<double> {
    ++calls;
    return absl::InternalError("kernel failed");
  }};
  absl::StatusOr<std::vector<std::vector<double>>> seconds = TimeInterleaved(runs, 5);
  EXPECT_EQ(seconds.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(calls, 1);
}

TEST(MedianRatio, TakesTheRatioWithinEachRound) {
  // Round by round the ratios are 3, 3, 3, 2, 2; the ratio of the medians
  // (4 / 2) would pair times from different rounds.
  std::vector<double> slower = {3, 30, 6, 4, 2};
  std::vector<double> faster = {1, 10, 2, 2, 1};
  EXPECT_DOUBLE_EQ(MedianRatio(slower, faster), 3.0);
  EXPECT_EQ(MedianRatio({}, {}), 0.0);
}

TEST(WallClock, PassesTheRunsErrorOn) {
  TimedRun run = WallClock([] { return absl::NotFoundError("no symbol"); });
  EXPECT_EQ(run().status().code(), absl::StatusCode::kNotFound);
  TimedRun fine = WallClock([] { return absl::OkStatus(); });
  absl::StatusOr<double> s = fine();
  ASSERT_TRUE(s.ok());
  EXPECT_GE(*s, 0.0);
}

}  // namespace
}  // namespace seam::runtime
