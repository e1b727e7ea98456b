/* stallmon: per-CPU stall detection (see stallmon_acct.h). Loaded by stallmon.c. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "../stallmon_acct.h"

char LICENSE[] SEC("license") = "GPL";

struct thread_info {
	unsigned int cpu;
} __attribute__((preserve_access_index));

/* the run queue's stolen time: with CONFIG_PARAVIRT_TIME_ACCOUNTING the scheduler adds the
 * hypervisor's steal clock (ns) to rq->prev_steal_time_rq at every update of the rq's clock
 * (each context switch, wakeup and tick); reached through a task's cfs_rq (CONFIG_FAIR_GROUP_SCHED) */
struct rq {
	__u64 prev_steal_time_rq;
	int cpu;
} __attribute__((preserve_access_index));

struct cfs_rq {
	struct rq *rq;
} __attribute__((preserve_access_index));

struct sched_entity {
	struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	char comm[16];
	struct thread_info thread_info;   /* .cpu since Linux 5.16 (THREAD_INFO_IN_TASK) */
	unsigned int cpu;                 /* before */
	struct sched_entity se;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vsb_stall_cfg);
} vsb_stcfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vsb_stall_cpu);
} vsb_stcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);             /* pid (thread id) */
	__type(value, __u8);
} vsb_stpids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);             /* pid of a watched thread that is runnable, not running */
	__type(value, struct vsb_stall_wait);
} vsb_stwait SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VSB_STALL_SEEN_SLOTS);
	__type(key, __u32);
	__type(value, struct vsb_stall_seen);
} vsb_stseen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);           /* the verdicts' generation (struct vsb_stall_seen) */
} vsb_stgen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} vsb_stev SEC(".maps");

static __always_inline struct vsb_stall_cfg *cfg(void)
{
	__u32 k = 0;
	return bpf_map_lookup_elem(&vsb_stcfg, &k);
}

static __always_inline void emit(__u32 kind, __u64 start, __u64 len, __u32 pid, const char *comm,
				 const char *held_by)
{
	struct vsb_stall_event *ev = bpf_ringbuf_reserve(&vsb_stev, sizeof(*ev), 0);
	if (!ev) {
		__u32 k = 0;
		struct vsb_stall_cpu *c = bpf_map_lookup_elem(&vsb_stcpu, &k);
		if (c)
			c->lost_events++;
		return;
	}
	ev->start_ns = start;
	ev->len_ns = len;
	ev->cpu = bpf_get_smp_processor_id();
	ev->kind = kind;
	ev->pid = pid;
	ev->pad = 0;
	__builtin_memset(ev->comm, 0, sizeof(ev->comm));
	__builtin_memset(ev->held_by, 0, sizeof(ev->held_by));
	if (comm)
		bpf_probe_read_kernel_str(ev->comm, sizeof(ev->comm), comm);
	else
		bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	if (held_by)
		bpf_probe_read_kernel_str(ev->held_by, sizeof(ev->held_by), held_by);
	bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);   /* read in batches (stallmon.c) */
}

/* (c) stolen time: the hypervisor's own account of how long it kept this vCPU from running,
 * read wherever the scheduler has just brought it up to date; a step of threshold_ns or more
 * since the last reading is a stall, placed just before the reading (its exact start is not
 * known: between the two readings) */
static __always_inline void check_steal(struct vsb_stall_cpu *s, struct task_struct *t, __u64 now,
					__u64 threshold_ns)
{
	if (!bpf_core_field_exists(struct rq, prev_steal_time_rq) ||
	    !bpf_core_field_exists(struct cfs_rq, rq))
		return;
	struct rq *rq = BPF_CORE_READ(t, se.cfs_rq, rq);
	if (!rq)
		return;
	if (BPF_CORE_READ(rq, cpu) != (int)bpf_get_smp_processor_id())
		return;
	__u64 steal = BPF_CORE_READ(rq, prev_steal_time_rq);
	__u64 last = s->steal_ns;
	s->steal_ns = steal;
	s->steal_reads++;
	if (last && steal > last && steal - last >= threshold_ns) {
		__u64 len = steal - last;
		emit(VSB_STALL_STEAL, now > len ? now - len : 0, len, 0, 0, 0);
	}
}

/* (a) the CPU's heartbeat: a cpu-clock perf event every period_ns; a late firing is a stall */
SEC("perf_event")
int vsb_stall_tick(void *ctx)
{
	__u32 k = 0;
	struct vsb_stall_cfg *c = cfg();
	struct vsb_stall_cpu *s = bpf_map_lookup_elem(&vsb_stcpu, &k);
	if (!c || !s)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 fired = s->last_ns;
	s->last_ns = now;
	s->ticks++;
	check_steal(s, (struct task_struct *)bpf_get_current_task(), now, c->threshold_ns);
	/* the timer does not run while a CPU idles: it was due a period after its last firing or
	 * after the CPU last left its idle task; a firing in the idle task ends no busy stretch */
	if (!fired || (bpf_get_current_pid_tgid() & 0xffffffff) == 0)
		return 0;
	__u64 due = (s->idle_exit_ns > fired ? s->idle_exit_ns : fired) + c->period_ns;
	if (now < due + c->threshold_ns)
		return 0;
	/* late. The CPU ran at its last firing, at its last context switch and at its last NAPI
	 * poll, so it stopped after the latest of them: that is the stall's start. The timer also
	 * skips whole periods on a CPU that is switching tasks (seen here: gaps of exactly 2-7
	 * periods with up to 63 switches inside and none of the loss a stopped CPU costs): such a
	 * gap, with evidence of running inside it, shrinks to what follows the evidence */
	__u64 ran = due - c->period_ns;
	if (s->switch_ns > ran)
		ran = s->switch_ns;
	if (s->napi_ns > ran)
		ran = s->napi_ns;
	if (now > ran && now - ran >= c->threshold_ns)
		emit(VSB_STALL_VCPU, ran, now - ran, 0, 0, 0);
	return 0;
}

/* (d) a NAPI poll on this CPU: it ran then (the heartbeat's evidence, see vsb_stall_tick); and
 * where the poll before it used its whole budget (frames were waiting: the next poll follows at
 * once) and no context switch came between, the time to this poll's end beyond what its frames
 * take at this CPU's usual pace is time the CPU did not poll: a stall (kind napi) */
struct napi_struct;

SEC("tp_btf/napi_poll")
int BPF_PROG(vsb_stall_napi, struct napi_struct *napi, int work, int budget)
{
	__u32 k = 0;
	struct vsb_stall_cpu *s = bpf_map_lookup_elem(&vsb_stcpu, &k);
	struct vsb_stall_cfg *c = cfg();
	if (!s || !c)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 prev = s->napi_ns;
	if (prev && s->napi_full && s->switch_ns < prev && work > 0 && now > prev) {
		__u64 gap = now - prev, allowance = (__u64)work * s->napi_ns_per_frame;
		if (gap < c->threshold_ns)          /* an ordinary poll: learn the pace */
			s->napi_ns_per_frame = s->napi_ns_per_frame
				? (7 * s->napi_ns_per_frame + gap / (__u64)work) / 8 : gap / (__u64)work;
		else if (s->napi_ns_per_frame && gap >= allowance + c->threshold_ns)
			emit(VSB_STALL_NAPI, prev, gap - allowance, (__u32)work, 0, 0);
	}
	s->napi_full = work >= budget;
	s->napi_ns = now;
	return 0;
}

static __always_inline int decide_watched(struct task_struct *t, __u32 pid)
{
	if (bpf_map_lookup_elem(&vsb_stpids, &pid))
		return 1;
	struct vsb_stall_cfg *c = cfg();
	if (!c)
		return 0;
	char comm[VSB_STALL_COMM_LEN];
	BPF_CORE_READ_STR_INTO(&comm, t, comm);
	for (int i = 0; i < VSB_STALL_COMM_PREFIXES; i++) {
		if (i >= c->n_prefixes)
			break;
		int n = c->prefix_len[i], same = 1;
		for (int j = 0; j < VSB_STALL_COMM_LEN; j++) {
			if (j >= n)
				break;
			if (comm[j] != c->prefix[i][j]) {
				same = 0;
				break;
			}
		}
		if (same && n)
			return 1;
	}
	return 0;
}

/* watched(), remembered per CPU by pid: a context switch asks about the same few tasks again and
 * again, and the hash lookup, the name's copy and the prefix compare cost about 0.1 us each time */
static __always_inline int watched(struct task_struct *t, __u32 pid)
{
	__u32 k = 0, slot = pid & (VSB_STALL_SEEN_SLOTS - 1);
	__u32 *gen = bpf_map_lookup_elem(&vsb_stgen, &k);
	struct vsb_stall_seen *seen = bpf_map_lookup_elem(&vsb_stseen, &slot);
	if (!gen || !seen)
		return decide_watched(t, pid);
	__u32 g = *gen;
	if (seen->pid == pid && seen->gen == g)
		return seen->watched;
	int w = decide_watched(t, pid);
	seen->pid = pid;
	seen->gen = g;
	seen->watched = w;
	return w;
}

/* a task got a new name (exec, prctl PR_SET_NAME) or a new task a pid: every cached verdict
 * is void */
static __always_inline void names_changed(void)
{
	__u32 k = 0;
	__u32 *gen = bpf_map_lookup_elem(&vsb_stgen, &k);
	if (gen)
		__sync_fetch_and_add(gen, 1);
}

SEC("tp_btf/task_rename")           /* its arguments differ across kernels: none is read */
int vsb_stall_rename(void *ctx)
{
	names_changed();
	return 0;
}

SEC("tp_btf/sched_process_exec")
int vsb_stall_exec(void *ctx)
{
	names_changed();
	return 0;
}

static __always_inline unsigned int task_cpu(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return t->thread_info.cpu;
	return t->cpu;
}

/* a CPU's foreign time (tasks not the path's) up to `now`: its tally + the running task's share */
static __always_inline __u64 foreign_until(struct vsb_stall_cpu *s, __u64 now)
{
	__u64 f = s->foreign_ns;
	if (s->cur_foreign && s->cur_start_ns && now > s->cur_start_ns)
		f += now - s->cur_start_ns;
	return f;
}

/* a watched thread became runnable (woken: keep the earliest time; preempted: from now) */
/* a watched thread (pid) became runnable: waiting from now on (BPF_NOEXIST keeps an earlier start) */
static __always_inline void mark_runnable(struct task_struct *t, __u32 pid, __u64 flags)
{
	__u32 k = 0;
	struct vsb_stall_wait w = {.since_ns = bpf_ktime_get_ns(), .cpu = task_cpu(t)};
	struct vsb_stall_cpu *s = bpf_map_lookup_percpu_elem(&vsb_stcpu, &k, w.cpu);
	if (s)
		w.foreign_at_ns = foreign_until(s, w.since_ns);
	else
		w.cpu = (__u32)-1;        /* unknown: charge the whole wait */
	bpf_map_update_elem(&vsb_stwait, &pid, &w, flags);
}

static __always_inline void became_runnable(struct task_struct *t, __u64 flags)
{
	__u32 pid = t->pid;            /* tp_btf: a typed pointer, read directly (no helper call) */
	if (pid && watched(t, pid))
		mark_runnable(t, pid, flags);
}

/* (b) run-queue delay of the watched threads */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(vsb_stall_wakeup, struct task_struct *p)
{
	became_runnable(p, BPF_NOEXIST);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(vsb_stall_wakeup_new, struct task_struct *p)
{
	names_changed();                /* a new task: perhaps a pid seen before, another name */
	became_runnable(p, BPF_NOEXIST);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(vsb_stall_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 prev_pid = prev->pid, next_pid = next->pid;   /* direct reads: typed pointers */
	__u32 k = 0;
	__u64 now = bpf_ktime_get_ns();
	/* whether each is the path's: remembered per CPU (watched()), so that a switch between two
	 * foreign tasks, the common case, costs no hash lookup */
	int prev_watched = prev_pid && watched(prev, prev_pid);
	int next_watched = next_pid && watched(next, next_pid);
	struct vsb_stall_cpu *s = bpf_map_lookup_elem(&vsb_stcpu, &k);
	struct vsb_stall_cfg *c = cfg();    /* one lookup for both uses below */
	if (s) {
		s->switch_ns = now;
		if (prev_pid == 0)          /* leaving or entering the idle task */
			s->idle_exit_ns = now;
		else if (next_pid == 0)
			s->idle_enter_ns = now;
		/* the foreign tally: prev's share, then whether next is the path's. The idle task
		 * counts as foreign: a watched thread runnable while its CPU idles is one the CPU did
		 * not get to (a halted vCPU the hypervisor woke late) */
		s->foreign_ns = foreign_until(s, now);
		s->cur_start_ns = now;
		s->cur_foreign = !next_watched;
		if (s->cur_foreign)
			s->foreign_task = (__u64)next;
		if (c)
			check_steal(s, prev, now, c->threshold_ns);
	}
	/* switched out but still runnable (preempted, or yielding): waiting from now; switched out
	 * to sleep: not waiting (a wakeup seen while it ran, e.g. a NAPI reschedule, is void) */
	if (prev_watched) {
		if (preempt || prev_state == 0)
			mark_runnable(prev, prev_pid, BPF_ANY);
		else
			bpf_map_delete_elem(&vsb_stwait, &prev_pid);
	}
	if (!next_watched)
		return 0;
	__u32 pid = next_pid;
	struct vsb_stall_wait *w = bpf_map_lookup_elem(&vsb_stwait, &pid);
	if (!w)
		return 0;
	__u64 start = w->since_ns, len = now > start ? now - start : 0;
	const char *held_by = prev->comm;
	if (s && w->cpu == bpf_get_smp_processor_id()) {   /* waited here: its foreign share only */
		__u64 f = s->foreign_ns;
		len = f > w->foreign_at_ns ? f - w->foreign_at_ns : 0;
		held_by = (const char *)(s->foreign_task + bpf_core_field_offset(struct task_struct, comm));
	}
	bpf_map_delete_elem(&vsb_stwait, &pid);
	if (c && len >= c->threshold_ns)
		emit(VSB_STALL_RUNQ, start, len, pid, next->comm, held_by);
	return 0;
}
