/* Unit tests: vsb_at_once runs its calls concurrently (each waits, up to 5 s, until all have
 * begun: run one after the other they would not), every call exactly once, and returns when all
 * are done. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "common.h"
#include "check.h"

enum { N = 5 };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int begun, all_met, runs[N];

static void meet(void *arg)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&lock);
	begun++;
	pthread_cond_broadcast(&cond);
	while (begun < N)
		if (pthread_cond_timedwait(&cond, &lock, &until))
			break;
	if (begun >= N)
		all_met++;
	runs[*(int *)arg]++;
	pthread_mutex_unlock(&lock);
}

static int count_calls;
static void count(void *arg) { count_calls += *(int *)arg; }

int main(void)
{
	int idx[N];
	void *args[N];
	for (int i = 0; i < N; i++) {
		idx[i] = i;
		args[i] = &idx[i];
	}
	vsb_at_once(meet, args, N);
	CHECK_EQ(all_met, N);
	for (int i = 0; i < N; i++)
		CHECK_EQ(runs[i], 1);
	vsb_at_once(count, args, 1); /* one call: in the caller */
	CHECK_EQ(count_calls, 0);    /* idx[0] == 0 */
	vsb_at_once(count, args + 3, 1);
	CHECK_EQ(count_calls, 3);
	vsb_at_once(count, args, 0);
	CHECK_EQ(count_calls, 3);
	return check_exit("test_at_once");
}
