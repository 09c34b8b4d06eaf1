// Clock readings in milliseconds, shared by the native reader and the C benchmark tools (bench/*.c).
// CLOCK_MONOTONIC is the clock behind Node's performance.now(); kernel receive stamps are CLOCK_REALTIME.
#ifndef SPECTUNE_CLOCK_MS_H
#define SPECTUNE_CLOCK_MS_H
#include <time.h>

static inline double clock_ms(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline double mono_ms(void) { return clock_ms(CLOCK_MONOTONIC); }
static inline double real_ms(void) { return clock_ms(CLOCK_REALTIME); }

#endif
