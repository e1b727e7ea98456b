/* Unit tests: receive accounting (loss, duplicates, reordering, wraparound, epochs, latency, jitter,
 * IPDV). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frame.h"
#include "rxstats.h"
#include "tsc.h"
#include "check.h"

static struct rxstats r;
static double hz;

static uint64_t ticks(double ns) { return (uint64_t)llround(ns * hz / 1e9); }

/* receive seq with tx at t_ns and rx at t_ns + delay_ns (base keeps the TSC values large) */
static void rx(uint8_t epoch, uint16_t stream, uint32_t seq, double t_ns, double delay_ns)
{
	const uint64_t base = 1ull << 40;
	struct sig s = { .epoch = epoch, .stream = stream, .seq = seq, .tx_tsc = base + ticks(t_ns) };
	rxstats_account(&r, &s, base + ticks(t_ns) + ticks(delay_ns), 60);
}

static struct stream_stats *st(uint16_t id)
{
	for (unsigned i = 0; i < r.nstreams; i++)
		if (r.s[i].stream == id)
			return &r.s[i];
	return NULL;
}

static void test_in_order(void)
{
	rxstats_reset(&r, 1);
	for (uint32_t i = 0; i < 1000; i++)
		rx(1, 5, i, i * 1000.0, 5000);
	struct stream_stats *s = st(5);
	CHECK(s != NULL);
	CHECK_EQ(s->rx, 1000);
	CHECK_EQ(s->unique, 1000);
	CHECK_EQ(stream_lost(s), 0);
	CHECK_EQ(s->duplicated, 0);
	CHECK_EQ(s->reordered, 0);
	CHECK_EQ(s->bytes, 60000);
	CHECK_EQ(s->max_seq_ext, 1000);
	/* constant delay: jitter and IPDV are 0, latency is the delay */
	CHECK(s->jitter_ns == 0);
	CHECK_EQ(s->ipdv_pos.count, 999);
	CHECK_EQ(s->ipdv_pos.max, 0);
	CHECK_EQ(s->ipdv_neg.count, 0);
	CHECK(rxstats_ipdv_quantile(&r, 0) == 0 && rxstats_ipdv_quantile(&r, 1) == 0);
	CHECK_EQ(s->lat.count, 1000);
	CHECK_NEAR(s->lat.min, 5000, 2);
	CHECK_NEAR(s->lat.max, 5000, 2);
	struct rx_totals t;
	rxstats_totals(&r, &t);
	CHECK(t.rx == 1000 && t.unique == 1000 && t.lost == 0 && t.duplicated == 0 && t.reordered == 0);
	CHECK(t.jitter_ns == 0);
}

static void test_loss(void)
{
	rxstats_reset(&r, 1);
	for (uint32_t i = 0; i < 100; i++)
		if (i != 10 && (i < 20 || i >= 30))
			rx(1, 1, i, i * 1000.0, 1000);
	struct stream_stats *s = st(1);
	CHECK_EQ(stream_lost(s), 11);
	CHECK_EQ(s->unique, 89);
	CHECK_EQ(s->reordered, 0);
	/* first frames lost: counted from 0 */
	rxstats_reset(&r, 1);
	for (uint32_t i = 5; i < 10; i++)
		rx(1, 1, i, i * 1000.0, 1000);
	CHECK_EQ(stream_lost(st(1)), 5);
	/* tail loss is invisible to sequence accounting (the caller compares with tx) */
	CHECK_EQ(st(1)->max_seq_ext, 10);
}

static void test_dup_reorder(void)
{
	rxstats_reset(&r, 1);
	for (uint32_t i = 0; i < 10; i++)
		rx(1, 1, i, i * 1000.0, 1000);
	rx(1, 1, 5, 5000, 20000); /* duplicate */
	rx(1, 1, 9, 9000, 20000); /* duplicate of the latest */
	struct stream_stats *s = st(1);
	CHECK_EQ(s->duplicated, 2);
	CHECK_EQ(s->unique, 10);
	CHECK_EQ(s->rx, 12);
	CHECK_EQ(s->reordered, 0);
	CHECK_EQ(stream_lost(s), 0);

	/* a swapped pair: 1 reordered, 0 lost */
	rxstats_reset(&r, 1);
	const uint32_t order[] = { 0, 1, 3, 2, 4, 5 };
	for (unsigned k = 0; k < 6; k++) {
		rx(1, 1, order[k], order[k] * 1000.0, 1000);
		if (order[k] == 3)
			CHECK_EQ(stream_lost(st(1)), 1); /* gap until 2 arrives */
	}
	s = st(1);
	CHECK_EQ(s->reordered, 1);
	CHECK_EQ(stream_lost(s), 0);
	CHECK_EQ(s->duplicated, 0);
	CHECK_EQ(s->unique, 6);
	rx(1, 1, 2, 2000, 1000); /* the late one again: duplicate, not reordered */
	CHECK_EQ(s->duplicated, 1);
	CHECK_EQ(s->reordered, 1);

	/* older than the window: reordered, not unique (still lost), not duplicated */
	rxstats_reset(&r, 1);
	rx(1, 1, 0, 0, 1000);
	rx(1, 1, 100000, 1e6, 1000);
	s = st(1);
	CHECK_EQ(stream_lost(s), 99999);
	rx(1, 1, 5, 5000, 1000);
	CHECK_EQ(s->reordered, 1);
	CHECK_EQ(s->unique, 2);
	CHECK_EQ(stream_lost(s), 99999);
	rx(1, 1, 0, 0, 1000);
	CHECK_EQ(s->duplicated, 0);
	CHECK_EQ(s->reordered, 2);
	/* inside the window after the jump: the oldest slot still in the window */
	rx(1, 1, 100000 - RX_WINDOW + 1, 0, 1000);
	CHECK_EQ(s->reordered, 3);
	CHECK_EQ(s->unique, 3);
	rx(1, 1, 100000 - RX_WINDOW + 1, 0, 1000);
	CHECK_EQ(s->duplicated, 1);
	rx(1, 1, 100000 - RX_WINDOW, 0, 1000); /* just outside */
	CHECK_EQ(s->reordered, 4);
	CHECK_EQ(s->unique, 3);

	/* window slots are recycled correctly over a long run with periodic duplicates */
	rxstats_reset(&r, 1);
	for (uint32_t i = 0; i < 300000; i++) {
		rx(1, 2, i, i, 100);
		if (i % 1000 == 999)
			rx(1, 2, i - 500, i, 100); /* duplicate 500 back */
		if (i % 7000 == 10)
			i += 3; /* lose 3 */
	}
	s = st(2);
	CHECK_EQ(s->duplicated, 300);
	CHECK_EQ(s->reordered, 0);
	CHECK_EQ(stream_lost(s), 43 * 3);
}

static void test_wrap(void)
{
	rxstats_reset(&r, 1);
	rx(1, 1, 0, 0, 1000);
	rx(1, 1, 0x40000000u, 1, 1000);
	rx(1, 1, 0x80000000u, 2, 1000);
	rx(1, 1, 0xc0000000u, 3, 1000);
	for (uint32_t i = 0xfffffff0u; i != 0x10; i++)
		if (i != 0xffffffffu)
			rx(1, 1, i, 4, 1000);
	struct stream_stats *s = st(1);
	CHECK_EQ(s->max_seq_ext, 0x100000010ull);
	CHECK_EQ(s->unique, 4 + 31);
	CHECK_EQ(stream_lost(s), 0x100000010ull - 35);
	CHECK_EQ(s->reordered, 0);
	rx(1, 1, 0xffffffffu, 5, 1000); /* late across the wrap */
	CHECK_EQ(s->reordered, 1);
	CHECK_EQ(s->unique, 36);
	rx(1, 1, 0xfffffffeu, 5, 1000); /* duplicate across the wrap */
	CHECK_EQ(s->duplicated, 1);
	CHECK_EQ(s->max_seq_ext, 0x100000010ull);
	/* a sequence before 0 in the first epoch of the stream */
	rxstats_reset(&r, 1);
	rx(1, 1, 3, 0, 1000);
	rx(1, 1, 0xfffffffeu, 0, 1000);
	s = st(1);
	CHECK_EQ(s->reordered, 1);
	CHECK_EQ(s->unique, 1);
	CHECK_EQ(s->max_seq_ext, 4);
}

static void test_epoch_streams(void)
{
	rxstats_reset(&r, 7);
	rx(6, 1, 0, 0, 1000);
	rx(8, 1, 1, 0, 1000);
	CHECK_EQ(r.stale, 2);
	CHECK_EQ(r.nstreams, 0);
	rx(7, 1, 0, 0, 1000);
	CHECK_EQ(r.nstreams, 1);
	for (unsigned i = 0; i < RX_MAX_STREAMS + 3; i++)
		rx(7, (uint16_t)(100 + i), 0, 0, 1000);
	CHECK_EQ(r.nstreams, RX_MAX_STREAMS);
	CHECK_EQ(r.overflow_streams, 4);
	struct rx_totals t;
	rxstats_totals(&r, &t);
	CHECK_EQ(t.rx, RX_MAX_STREAMS);
	CHECK_EQ(t.lost, 0);
	static struct hist lat;
	rxstats_latency(&r, &lat);
	CHECK_EQ(lat.count, RX_MAX_STREAMS);
	/* reset clears everything and slots are reused */
	rxstats_reset(&r, 8);
	CHECK(r.stale == 0 && r.overflow_streams == 0 && r.nstreams == 0);
	rx(8, 55, 3, 0, 1000);
	CHECK_EQ(r.nstreams, 1);
	CHECK_EQ(st(55)->rx, 1);
	CHECK_EQ(st(55)->lat.count, 1);
	CHECK_EQ(stream_lost(st(55)), 3);
}

static void test_latency_jitter_ipdv(void)
{
	/* rx before tx: no latency recorded, still accounted */
	rxstats_reset(&r, 1);
	struct sig s = { .epoch = 1, .stream = 1, .seq = 0, .tx_tsc = 1000000 };
	rxstats_account(&r, &s, 999999, 60);
	CHECK_EQ(st(1)->rx, 1);
	CHECK_EQ(st(1)->lat.count, 0);

	/* delays 1000, 3000, 2000: D = +2000, -1000 */
	rxstats_reset(&r, 1);
	rx(1, 1, 0, 0, 1000);
	rx(1, 1, 1, 10000, 3000);
	rx(1, 1, 2, 20000, 2000);
	struct stream_stats *st1 = st(1);
	CHECK_EQ(st1->ipdv_pos.count, 1);
	CHECK_EQ(st1->ipdv_neg.count, 1);
	CHECK_NEAR(st1->ipdv_pos.max, 2000, 2);
	CHECK_NEAR(st1->ipdv_neg.max, 1000, 2);
	CHECK_NEAR(rxstats_ipdv_quantile(&r, 0), -1000, 2);
	CHECK_NEAR(rxstats_ipdv_quantile(&r, 0.5), -1000, 2);
	CHECK_NEAR(rxstats_ipdv_quantile(&r, 0.51), 2000, 2);
	CHECK_NEAR(rxstats_ipdv_quantile(&r, 1), 2000, 2);
	/* J = 2000/16 = 125, then += (1000 - 125)/16 */
	CHECK_NEAR(st1->jitter_ns, 125 + (1000 - 125) / 16.0, 0.5);
	CHECK_NEAR(st1->lat.mean, 2000, 2);

	/* alternating delays 5000/6000: |D| = 1000, J converges to 1000 */
	rxstats_reset(&r, 1);
	for (uint32_t i = 0; i < 2000; i++)
		rx(1, 1, i, i * 10000.0, i & 1 ? 6000 : 5000);
	CHECK_NEAR(st(1)->jitter_ns, 1000, 2);
	CHECK_EQ(st(1)->ipdv_pos.count, 1000);
	CHECK_EQ(st(1)->ipdv_neg.count, 999);
	CHECK_NEAR(rxstats_ipdv_quantile(&r, 0.25), -1000, 10);
	CHECK_NEAR(rxstats_ipdv_quantile(&r, 0.75), 1000, 10);
	struct rx_totals t;
	rxstats_totals(&r, &t);
	CHECK_NEAR(t.jitter_ns, 1000, 2);
	/* a late (here duplicate) frame does not feed jitter/IPDV */
	double j = st(1)->jitter_ns;
	uint64_t n = st(1)->ipdv_pos.count + st(1)->ipdv_neg.count;
	rx(1, 1, 1998, 1998 * 10000.0, 100000);
	CHECK(st(1)->jitter_ns == j);
	CHECK_EQ(st(1)->ipdv_pos.count + st(1)->ipdv_neg.count, n);
	/* empty: 0 */
	rxstats_reset(&r, 1);
	CHECK(rxstats_ipdv_quantile(&r, 0.5) == 0);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_speed(void)
{
	rxstats_reset(&r, 1);
	const uint32_t N = 5000000;
	struct sig s = { .epoch = 1, .stream = 1 };
	uint64_t step = ticks(1000);
	double t0 = now_s();
	for (uint32_t i = 0; i < N; i++) {
		s.seq = i;
		s.tx_tsc = (1ull << 40) + i * step;
		rxstats_account(&r, &s, s.tx_tsc + 5 * step + (i & 7) * 13, 60);
	}
	double ns = (now_s() - t0) / N * 1e9;
	printf("  rxstats_account: %.1f ns/frame\n", ns);
	CHECK_EQ(st(1)->unique, N);
	CHECK(ns < 1000);
}

int main(void)
{
	hz = tsc_hz();
	CHECK(hz > 0);
	CHECK_EQ(rxstats_init(&r, 1), 0);
	test_in_order();
	test_loss();
	test_dup_reorder();
	test_wrap();
	test_epoch_streams();
	test_latency_jitter_ipdv();
	test_speed();
	rxstats_free(&r);
	return check_exit("test_rxstats");
}
