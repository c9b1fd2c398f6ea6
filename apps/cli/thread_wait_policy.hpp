// How long idle OpenMP threads spin before sleeping, chosen before libgomp starts.
//
// With OMP_WAIT_POLICY unset, libgomp lets an idle thread spin GOMP_SPINCOUNT = 300,000
// iterations before it sleeps. When the machine is busy, a spinning thread burns the time
// slice its descheduled partner needs to reach the barrier. Measured with
// bench/bench_step_profile (transformer_tiny, 2 threads, 2 cores; tokens/s):
//
//                           quiet machine   two other busy processes
//   libgomp default               3,337            507
//   GOMP_SPINCOUNT=30000          3,287          1,027
//   OMP_WAIT_POLICY=passive       3,080          1,221
//
// attnlab therefore uses GOMP_SPINCOUNT=30000 unless the user set OMP_WAIT_POLICY or
// GOMP_SPINCOUNT. libgomp reads them once, when it is loaded, so the only way to choose them
// from inside the program is to set the variable and re-execute the binary, first thing in main.
#pragma once

namespace attn::app {

// Sets GOMP_SPINCOUNT and re-executes argv (via /proc/self/exe) when neither variable is
// set; returns without doing anything otherwise, or if re-execution fails.
void choose_thread_wait_policy(char** argv);

}  // namespace attn::app
