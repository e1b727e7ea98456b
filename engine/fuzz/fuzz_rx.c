/* libFuzzer target: the receive path and the control-line parser on arbitrary bytes.
 * frame_parse_l2, frame_parse_payload, frame_swap_l2 (on a copy, which must still parse the same
 * way afterwards), rxstats_account for engine frames, ctl_parse. */
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "churn.h"
#include "ctl_parse.h"
#include "frame.h"
#include "rxstats.h"

static struct rxstats rx;
static int rx_ready;
static uint64_t fake_tsc;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!rx_ready) {
		if (rxstats_init(&rx, 0) < 0)
			abort();
		rx_ready = 1;
	}
	/* exact-size heap copies so ASan sees any overread */
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	struct sig s;
	enum parse_result r = frame_parse_l2(buf, size, &s);
	if (r != PARSE_OK && r != PARSE_FOREIGN && r != PARSE_MALFORMED)
		abort();
	fake_tsc += 1000 + (size & 0xff);
	if (r == PARSE_OK) {
		rx.epoch = s.epoch; /* account most frames instead of only counting them stale */
		rxstats_account(&rx, &s, fake_tsc ^ (size > 20 ? (uint64_t)data[size - 1] << 40 : 0),
				(unsigned)size);
	}

	struct sig s2;
	enum parse_result rp = frame_parse_payload(buf, size, &s2);
	if (rp == PARSE_OK) {
		rx.epoch = (uint8_t)(s2.epoch + (size & 1)); /* sometimes stale */
		rxstats_account(&rx, &s2, fake_tsc, (unsigned)size);
	}

	if (frame_swap_l2(buf, size) == 0) {
		/* swapping keeps checksums valid: the verdict must not change */
		struct sig s3;
		enum parse_result r3 = frame_parse_l2(buf, size, &s3);
		if (r3 != r)
			abort();
		if (r == PARSE_OK && (s3.seq != s.seq || s3.tx_tsc != s.tx_tsc || s3.stream != s.stream))
			abort();
		frame_swap_l2(buf, size);
		if (memcmp(buf, data, size) != 0)
			abort();
	}
	free(buf);

	char *line = malloc(size ? size : 1);
	if (line) {
		memcpy(line, data, size);
		static struct ctl_msg m;
		char msg[256];
		if (ctl_parse(line, size, &m, msg, sizeof(msg)) == 0) {
			for (unsigned i = 0; i < m.n; i++)
				if (ctl_get(&m, m.kv[i].key) != &m.kv[i] || strlen(m.kv[i].str) >= CTL_MAX_STR)
					abort();
			/* churn values as control mode checks them: any numbers, a verdict with a reason, and an
			 * accepted schedule keeps its window inside [floor(A D), ceil(A D)] flows */
			const struct ctl_kv *a = ctl_get(&m, "flow_arrival"), *l = ctl_get(&m, "flow_life");
			if (a && l && !a->is_str && !l->is_str) {
				char cm[512] = "";
				if (churn_check(a->num, l->num, 1u << 16, "a", "l", cm, sizeof(cm))) {
					if (!cm[0])
						abort();
				} else if (a->num > 0) {
					uint64_t lo, hi;
					churn_window_at(a->num, l->num, (double)(fake_tsc & 0xffff) / 7.0, &lo, &hi);
					double n = (double)(hi - lo + 1), ad = a->num * l->num;
					if (hi < lo || n < floor(ad) || n > ceil(ad))
						abort();
				}
			}
		} else if (!msg[0]) {
			abort(); /* a failure always says why */
		}
		free(line);
	}

	/* keep the summaries exercised now and then */
	if ((fake_tsc & 0xffff) < 1200) {
		struct rx_totals t;
		rxstats_totals(&rx, &t);
		(void)rxstats_ipdv_quantile(&rx, 0.5);
		if (t.rx > 100000)
			rxstats_reset(&rx, 0);
	}
	return 0;
}
