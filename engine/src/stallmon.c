/* stallmon: the host-stall monitor, `vswbench-engine stallmon` (records in engine/README.md).
 * Loads bpf/stallmon.bpf.c (embedded at build time): a cpu-clock perf event per listed CPU runs
 * vsb_stall_tick every --period-us (a late firing = the CPU was not running), and the scheduler
 * tracepoints time how long watched threads wait runnable. Each stall is one `stall` record;
 * SIGINT/SIGTERM or --duration end the run with a `final` record (per-CPU tallies, timer ticks).
 * The BPF side does not wake the monitor per stall: it reads the ring every BATCH_NS and writes
 * what it found as one batch, so on a path whose CPUs are all busy its own wake-ups do not stall
 * the tester it watches. SIGUSR1 asks for a read now: the batch ends with a `flushed` record
 * (`upto_ns`: every stall that ended before then is printed above it). */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "jout.h"
#include "stallmon.h"
#include "stallmon_acct.h"

__asm__(".pushsection .rodata\n"
	".balign 8\n"
	".hidden vsb_stallmon_obj\n.global vsb_stallmon_obj\nvsb_stallmon_obj:\n"
	".incbin \"" VSB_STALLMON_OBJ "\"\n"
	".hidden vsb_stallmon_obj_end\n.global vsb_stallmon_obj_end\nvsb_stallmon_obj_end:\n"
	".popsection\n");
extern const unsigned char vsb_stallmon_obj[], vsb_stallmon_obj_end[];

struct mon {
	struct stallmon_opts o;
	struct bpf_object *obj;
	struct bpf_link *links[STALLMON_MAX_CPUS + 6];
	unsigned n_links;
	int perf_fds[STALLMON_MAX_CPUS];
	struct ring_buffer *rb;
	struct stallmon_cpu_sum sum[STALLMON_MAX_CPUS];
	uint64_t outside;                   /* stalls on CPUs not listed (runq of a migrated thread) */
};

static char lib_msg[512];
static int keep_msg(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_WARN)
		vsnprintf(lib_msg, sizeof(lib_msg), fmt, ap);
	return 0;
}

#define BATCH_NS 100000000L            /* read the ring every 100 ms (and on SIGUSR1) */

static volatile sig_atomic_t flush_requested;
static void on_flush_request(int sig) { (void)sig; flush_requested = 1; }

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *kind_name(unsigned k)
{
	return k == VSB_STALL_VCPU ? "vcpu" : k == VSB_STALL_STEAL ? "steal"
	       : k == VSB_STALL_NAPI ? "napi" : "runq";
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct mon *m = ctx;
	const struct vsb_stall_event *ev = data;
	if (size < sizeof(*ev))
		return 0;
	int i = stallmon_cpu_index(&m->o, (int)ev->cpu);
	if (i < 0) {
		m->outside++;
		return 0;
	}
	stallmon_sum_add(&m->sum[i], ev->kind, ev->len_ns);
	char comm[17] = {0}, held[17] = {0};
	memcpy(comm, ev->comm, 16);
	memcpy(held, ev->held_by, 16);
	struct jout j;
	jout_begin(&j);
	jout_str(&j, "type", "stall");
	jout_u64(&j, "cpu", ev->cpu);
	jout_str(&j, "kind", kind_name(ev->kind));
	jout_u64(&j, "start_ns", ev->start_ns);
	jout_dbl(&j, "len_us", ev->len_ns / 1000.0);
	if (ev->kind == VSB_STALL_RUNQ) {
		jout_u64(&j, "pid", ev->pid);
		jout_str(&j, "comm", comm);
		jout_str(&j, "held_by", held);
	} else {
		if (ev->kind == VSB_STALL_NAPI)
			jout_u64(&j, "frames", ev->pid);   /* the poll that ended it */
		jout_str(&j, "comm", comm);   /* the task running when it was seen */
	}
	jout_emit_batched(&j);
	return 0;
}

static int setup(struct mon *m, struct vsb_error *e)
{
	libbpf_set_print(keep_msg);
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "vsb_stallmon");
	m->obj = bpf_object__open_mem(vsb_stallmon_obj,
				      (size_t)(vsb_stallmon_obj_end - vsb_stallmon_obj), &oo);
	if (!m->obj)
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "stallmon: cannot open the embedded BPF object: %s",
				strerror(errno));
	int err = bpf_object__load(m->obj);
	if (err)
		return vsb_fail(e, geteuid() ? VSB_ERR_PERM : VSB_ERR_UNSUPPORTED, "stallmon: the kernel "
				"refused the BPF programs (root, BTF and tp_btf needed): %s: %s",
				strerror(-err), lib_msg);
	struct vsb_stall_cfg cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.period_ns = m->o.period_ns;
	cfg.threshold_ns = m->o.threshold_ns;
	cfg.n_prefixes = m->o.n_prefixes;
	for (unsigned i = 0; i < m->o.n_prefixes; i++) {
		memcpy(cfg.prefix[i], m->o.prefixes[i], strlen(m->o.prefixes[i]));
		cfg.prefix_len[i] = (__u8)strlen(m->o.prefixes[i]);
	}
	__u32 k = 0;
	__u8 one = 1;
	bpf_map__update_elem(bpf_object__find_map_by_name(m->obj, "vsb_stcfg"), &k, sizeof(k), &cfg,
			     sizeof(cfg), 0);
	struct bpf_map *pids = bpf_object__find_map_by_name(m->obj, "vsb_stpids");
	for (unsigned i = 0; i < m->o.n_pids; i++)
		bpf_map__update_elem(pids, &m->o.pids[i], sizeof(__u32), &one, 1, 0);
	static const char *tps[] = {"vsb_stall_wakeup", "vsb_stall_wakeup_new", "vsb_stall_switch",
				    "vsb_stall_rename", "vsb_stall_exec", "vsb_stall_napi"};
	for (unsigned i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		struct bpf_link *l = bpf_program__attach(bpf_object__find_program_by_name(m->obj, tps[i]));
		if (!l)
			return vsb_fail(e, VSB_ERR_UNSUPPORTED, "stallmon: cannot attach %s: %s", tps[i],
					strerror(errno));
		m->links[m->n_links++] = l;
	}
	struct bpf_program *tick = bpf_object__find_program_by_name(m->obj, "vsb_stall_tick");
	for (unsigned i = 0; i < m->o.n_cpus; i++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.sample_period = m->o.period_ns;
		int fd = (int)syscall(__NR_perf_event_open, &a, -1, m->o.cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			return vsb_fail(e, VSB_ERR_UNSUPPORTED, "stallmon: perf cpu-clock event on CPU %d: %s "
					"(does the CPU exist? perf_event_paranoid?)", m->o.cpus[i],
					strerror(errno));
		m->perf_fds[i] = fd;
		struct bpf_link *l = bpf_program__attach_perf_event(tick, fd);
		if (!l)
			return vsb_fail(e, VSB_ERR_UNSUPPORTED, "stallmon: cannot attach the timer on CPU %d: "
					"%s", m->o.cpus[i], strerror(errno));
		m->links[m->n_links++] = l;
	}
	m->rb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(m->obj, "vsb_stev")),
				 on_event, m, NULL);
	if (!m->rb)
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "stallmon: ring buffer: %s", strerror(errno));
	return 0;
}

static void teardown(struct mon *m)
{
	if (m->rb)
		ring_buffer__free(m->rb);
	for (unsigned i = 0; i < m->n_links; i++)
		bpf_link__destroy(m->links[i]);
	for (unsigned i = 0; i < m->o.n_cpus; i++)
		if (m->perf_fds[i] > 0)
			close(m->perf_fds[i]);
	if (m->obj)
		bpf_object__close(m->obj);
}

static void emit_final(struct mon *m, uint64_t t0, uint64_t t1)
{
	unsigned ncpu = (unsigned)libbpf_num_possible_cpus();
	struct vsb_stall_cpu per[ncpu > 0 ? ncpu : 1];
	memset(per, 0, sizeof(per));
	__u32 k = 0;
	bpf_map__lookup_elem(bpf_object__find_map_by_name(m->obj, "vsb_stcpu"), &k, sizeof(k), per,
			     sizeof(per), 0);
	struct jout j;
	jout_begin(&j);
	jout_str(&j, "type", "final");
	jout_str(&j, "mode", "stallmon");
	jout_u64(&j, "start_ns", t0);
	jout_u64(&j, "end_ns", t1);
	jout_dbl(&j, "duration_s", (t1 - t0) / 1e9);
	jout_u64(&j, "stalls_outside", m->outside);
	jout_key_arr(&j, "cpus");
	for (unsigned i = 0; i < m->o.n_cpus; i++) {
		unsigned c = (unsigned)m->o.cpus[i];
		const struct vsb_stall_cpu *p = c < ncpu ? &per[c] : NULL;
		const struct stallmon_cpu_sum *s = &m->sum[i];
		jout_obj(&j);
		jout_u64(&j, "cpu", c);
		jout_u64(&j, "ticks", p ? p->ticks : 0);
		jout_dbl(&j, "expected_ticks", (double)(t1 - t0) / (double)m->o.period_ns);
		jout_u64(&j, "lost_events", p ? p->lost_events : 0);
		jout_u64(&j, "steal_reads", p ? p->steal_reads : 0);
		for (unsigned kind = VSB_STALL_VCPU; kind <= VSB_STALL_NAPI; kind++) {
			jout_key_obj(&j, kind_name(kind));
			jout_u64(&j, "stalls", s->stalls[kind]);
			jout_dbl(&j, "total_us", s->total_ns[kind] / 1000.0);
			jout_dbl(&j, "max_us", s->max_ns[kind] / 1000.0);
			jout_end_obj(&j);
		}
		jout_end_obj(&j);
	}
	jout_end_arr(&j);
	jout_emit(&j);
}

int stallmon_main(int argc, char **argv)
{
	static struct mon m;
	struct vsb_error e = {0};
	/* A session's monitor ends with the process that started it, even one killed by SIGKILL
	 * (its BPF programs go with it): never an orphan holding the CPUs' hooks. */
	pid_t parent = getppid();
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		return 1;
	if (stallmon_parse(argc, argv, &m.o, &e)) {
		fprintf(stderr, "vswbench-engine: error: %s\n", e.msg);
		return 2;
	}
	if (setup(&m, &e)) {
		teardown(&m);
		fprintf(stderr, "vswbench-engine: error: %s\n", e.msg);
		return vsb_exit_code(e.code);
	}
	uint64_t t0 = mono_ns();
	struct jout j;
	jout_begin(&j);
	jout_str(&j, "type", "start");
	jout_str(&j, "mode", "stallmon");
	jout_str(&j, "clock", "monotonic");
	jout_u64(&j, "start_ns", t0);
	jout_dbl(&j, "period_us", m.o.period_ns / 1000.0);
	jout_dbl(&j, "threshold_us", m.o.threshold_ns / 1000.0);
	jout_key_arr(&j, "cpus");
	for (unsigned i = 0; i < m.o.n_cpus; i++)
		jout_u64(&j, NULL, (uint64_t)m.o.cpus[i]);
	jout_end_arr(&j);
	jout_emit(&j);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_flush_request;   /* no SA_RESTART: the batch's sleep ends at once */
	sigaction(SIGUSR1, &sa, NULL);
	uint64_t end = m.o.duration_s > 0 ? t0 + (uint64_t)(m.o.duration_s * 1e9) : 0;
	int rc = 0;
	while (!vsb_stop && (!end || mono_ns() < end)) {
		if (!flush_requested) {
			struct timespec batch = {0, BATCH_NS};
			nanosleep(&batch, NULL);        /* EINTR: a flush request or the end */
		}
		int flush = flush_requested;
		flush_requested = 0;
		uint64_t upto = mono_ns();
		int n = ring_buffer__consume(m.rb);
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "vswbench-engine: error: stallmon: ring buffer read: %s\n",
				strerror(-n));
			rc = 1;
			break;
		}
		if (flush) {
			jout_begin(&j);
			jout_str(&j, "type", "flushed");
			jout_u64(&j, "upto_ns", upto);
			jout_emit_batched(&j);
		}
		fflush(stdout);
	}
	ring_buffer__consume(m.rb);
	emit_final(&m, t0, mono_ns());
	teardown(&m);
	return rc;
}
