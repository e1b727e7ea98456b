/* TSC clock: read, calibrate, convert. */
#ifndef VSB_TSC_H
#define VSB_TSC_H
#include <stdint.h>

static inline uint64_t tsc_now(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline void cpu_relax(void) { __asm__ __volatile__("pause"); }

struct tsc_info {
	double hz;           /* calibrated ticks per second */
	int invariant;       /* CPUID 0x80000007 EDX bit 8 */
	double cpuid_hz;     /* from CPUID 0x15/0x16 or hypervisor leaf, 0 if unknown */
	const char *source;  /* how hz was obtained */
};

/* Calibrate once (about 50 ms) and cache. */
const struct tsc_info *tsc_info(void);
static inline double tsc_hz(void) { return tsc_info()->hz; }
/* ticks -> nanoseconds */
uint64_t tsc_to_ns(uint64_t ticks);
double monotonic_s(void);
/* CLOCK_MONOTONIC now, ns (the clock of bpf_ktime_get_ns). */
uint64_t mono_ns_now(void);
/* A CLOCK_MONOTONIC time mono_ns -> TSC ticks, given that now_tsc was now_mono (ns). */
uint64_t tsc_from_mono(uint64_t mono_ns, uint64_t now_tsc, uint64_t now_mono);

#endif
