// What the CUDA emulator tells ThreadSanitizer, when it is built with -fsanitize=thread (the
// race-detection test, tests/cuda_emulator/emulator_race_probe.cpp); no-ops otherwise.
//
// Each CUDA thread of a block is a fiber of its own for ThreadSanitizer, and switching
// between fibers orders nothing (no_sync), so two threads' accesses to the same memory are a
// data race unless the emulated kernel ordered them the way a GPU would:
// * __syncthreads: every thread releases the barrier's sync object before it waits and
//   acquires it when it goes on (one object per barrier generation, so a thread already past
//   the barrier cannot leak its later writes into a slower thread's acquire);
// * the start and end of a block: the scheduler's set-up (kernel arguments, NaN-filled shared
//   memory) happens before every thread (the first switch into each thread is an ordered
//   one), and every thread before what the host does next.
// Warp shuffles order no memory (CUDA promises none); the emulator's own bookkeeping between
// a fiber and the scheduler is in relaxed atomics, so it creates no order either.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define ATTN_EMULATOR_RACE_DETECTION 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ATTN_EMULATOR_RACE_DETECTION 1
#endif
#endif

#ifdef ATTN_EMULATOR_RACE_DETECTION
#include <sanitizer/tsan_interface.h>
#endif

namespace attn::cuda_emulator::race_detector {

#ifdef ATTN_EMULATOR_RACE_DETECTION
inline constexpr bool kEnabled = true;
inline void* current_context() { return __tsan_get_current_fiber(); }
inline void* create_context() { return __tsan_create_fiber(0); }
inline void destroy_context(void* context) { __tsan_destroy_fiber(context); }
// Called immediately before the swapcontext that enters `context`: switch_to orders nothing,
// switch_to_ordered makes everything before it happen before what `context` does next.
inline void switch_to(void* context) { __tsan_switch_to_fiber(context, __tsan_switch_to_fiber_no_sync); }
inline void switch_to_ordered(void* context) { __tsan_switch_to_fiber(context, 0); }
inline void release(void* sync) { __tsan_release(sync); }
inline void acquire(void* sync) { __tsan_acquire(sync); }
#else
inline constexpr bool kEnabled = false;
inline void* current_context() { return nullptr; }
inline void* create_context() { return nullptr; }
inline void destroy_context(void*) {}
inline void switch_to(void*) {}
inline void switch_to_ordered(void*) {}
inline void release(void*) {}
inline void acquire(void*) {}
#endif

}  // namespace attn::cuda_emulator::race_detector
