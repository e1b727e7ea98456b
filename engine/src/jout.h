/* Minimal JSON-lines writer for stdout records. Not thread safe: one writer per record. */
#ifndef VSB_JOUT_H
#define VSB_JOUT_H
#include <stdint.h>
#include <stdio.h>
#include "hist.h"

struct jout {
	char *buf;
	size_t len, cap;
	int need_comma;
	int depth;
};

void jout_begin(struct jout *j);           /* starts "{" */
void jout_key_obj(struct jout *j, const char *key);  /* "key":{ */
void jout_key_arr(struct jout *j, const char *key);  /* "key":[ */
void jout_obj(struct jout *j);             /* { inside an array */
void jout_arr(struct jout *j);             /* [ inside an array */
void jout_end_obj(struct jout *j);
void jout_end_arr(struct jout *j);
void jout_str(struct jout *j, const char *key, const char *v);    /* key may be NULL in arrays */
void jout_u64(struct jout *j, const char *key, uint64_t v);
void jout_i64(struct jout *j, const char *key, int64_t v);
void jout_dbl(struct jout *j, const char *key, double v);        /* non-finite -> null */
void jout_bool(struct jout *j, const char *key, int v);
void jout_null(struct jout *j, const char *key);
/* latency summary object in microseconds: min p50 p90 p99 p999 p9999 max mean stddev count */
void jout_latency(struct jout *j, const char *key, const struct hist *h);
/* histogram as [[low_ns, high_ns, count], ...] of non-empty buckets */
void jout_hist(struct jout *j, const char *key, const struct hist *h);
/* Close the record, write it with a newline to stdout, flush, free. */
void jout_emit(struct jout *j);
/* The same without the flush: a batch of records, then one fflush(stdout) by the caller. */
void jout_emit_batched(struct jout *j);

#endif
