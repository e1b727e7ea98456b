/* The JSON-lines records of a run on stdout: start, interval, warning, final (records.c). */
#ifndef VSB_RECORDS_H
#define VSB_RECORDS_H
#include <stdint.h>

struct engine;
struct trial_params;
struct trial_result;

void emit_start(const struct engine *en, const struct trial_params *t);
void emit_interval(double t_s, uint64_t tx, uint64_t rx, double dt, uint64_t dtx, uint64_t drx);
/* Also on stderr. */
void emit_warning(const char *msg);
/* The final record; reads the ports' counters into r->pstats first. */
void emit_final(struct engine *en, const struct trial_params *t, struct trial_result *r);
#endif
