/* Assertion macros shared by the engine's C unit tests (tests/test_*.c). Each test is its own
 * program, so the counter is per test. A failed check reports file:line and the values, and the
 * test gives up after more than 20 failures. */
#ifndef VSB_TESTS_CHECK_H
#define VSB_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

#define CHECK_FAILED()                  \
	do {                            \
		if (++failures > 20)    \
			exit(1);        \
	} while (0)

#define CHECK(c)                                                                        \
	do {                                                                            \
		if (!(c)) {                                                             \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
			CHECK_FAILED();                                                 \
		}                                                                       \
	} while (0)

/* a == b, compared and printed as unsigned 64-bit (decimal and hex) */
#define CHECK_EQ(a, b)                                                                     \
	do {                                                                               \
		unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);     \
		if (a_ != b_) {                                                            \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %llu (0x%llx), %s = %llu (0x%llx)\n", \
				__FILE__, __LINE__, #a, a_, a_, #b, b_, b_);               \
			CHECK_FAILED();                                                    \
		}                                                                          \
	} while (0)

/* a == b, compared and printed as signed 64-bit */
#define CHECK_EQ_SIGNED(a, b)                                                              \
	do {                                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);                        \
		if (a_ != b_) {                                                            \
			fprintf(stderr, "%s:%d: CHECK_EQ_SIGNED failed: %s = %lld, %s = %lld\n", __FILE__, \
				__LINE__, #a, a_, #b, b_);                                 \
			CHECK_FAILED();                                                    \
		}                                                                          \
	} while (0)

/* |a - b| <= amount, or <= amount * |b| when `relative` (the tolerance scales with expected b) */
#define CHECK_NEAR_(name, a, a_str, b, b_str, amount, relative)                            \
	do {                                                                               \
		double a_ = (double)(a), b_ = (double)(b), amount_ = (double)(amount);     \
		if (!(fabs(a_ - b_) <= ((relative) ? amount_ * fabs(b_) : amount_))) {     \
			fprintf(stderr, "%s:%d: %s failed: %s = %.9g, %s = %.9g (%s %g)\n", \
				__FILE__, __LINE__, name, a_str, a_, b_str, b_,            \
				(relative) ? "rel" : "tol", amount_);                      \
			CHECK_FAILED();                                                    \
		}                                                                          \
	} while (0)
#define CHECK_NEAR(a, b, tol) CHECK_NEAR_("CHECK_NEAR", a, #a, b, #b, tol, 0)
#define CHECK_NEAR_REL(a, b, rel) CHECK_NEAR_("CHECK_NEAR_REL", a, #a, b, #b, rel, 1)

/* print the summary line for test `name`; returns the exit status for main() */
static inline int check_exit(const char *name)
{
	if (failures) {
		fprintf(stderr, "%s: %d failure(s)\n", name, failures);
		return 1;
	}
	printf("%s: ok\n", name);
	return 0;
}

#endif
