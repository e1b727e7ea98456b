/* stallmon: map layouts shared by the BPF programs (bpf/stallmon.bpf.c) and the monitor
 * (stallmon.c). A stall is an interval in which a CPU of the path did not run the path's work:
 *   STALL_VCPU  the CPU's periodic timer (a perf cpu-clock event every `period_ns`) fired late:
 *               the CPU itself was not running (the hypervisor stopped the vCPU, or interrupts
 *               were off) from its last sign of running (that firing, a context switch, a NAPI
 *               poll) until the late firing;
 *   STALL_RUNQ  a watched thread (the switch's NAPI threads, daemons, engines) was runnable but
 *               a task that is not the path's held its CPU (woken or preempted, until switched
 *               in). Its length is the time the CPU ran such foreign tasks (or idled: a halted
 *               vCPU woken late) while the thread waited: path threads that share a core by placement (an NF beside the switch's
 *               poller) take turns, and that turn-taking is the configuration's own cost, not a
 *               host stall. A thread that waited on one CPU and ran on another is charged its
 *               whole wait (the CPU's tally does not cover it).
 *   STALL_STEAL the hypervisor's own account of this vCPU's stolen time (the run queue's steal
 *               clock, CONFIG_PARAVIRT_TIME_ACCOUNTING) grew by at least the threshold between two
 *               readings (context switches and heartbeats): the vCPU was runnable on the host but
 *               not running, for that long, whether or not a heartbeat fell inside.
 *   STALL_NAPI  the CPU's NAPI polling stopped: a poll that used its whole budget (frames were
 *               waiting) was followed, with no context switch between, by the next poll's end
 *               later than that poll's frames take at the CPU's usual pace (learnt from its
 *               back-to-back polls) + the threshold; the stall is the excess. The CPU ran
 *               something else meanwhile (interrupts, other softirqs) or was stopped. `pid`
 *               carries the frames of that next poll.
 * Events are submitted without waking the monitor (BPF_RB_NO_WAKEUP): it reads them in batches,
 * so on a busy path its own wake-ups do not stall the tester it watches. */
#ifndef VSB_STALLMON_ACCT_H
#define VSB_STALLMON_ACCT_H

#define VSB_STALL_VCPU 1
#define VSB_STALL_RUNQ 2
#define VSB_STALL_STEAL 3
#define VSB_STALL_NAPI 4
#define VSB_STALL_MAX_CPUS 256
#define VSB_STALL_COMM_PREFIXES 4
#define VSB_STALL_COMM_LEN 16

struct vsb_stall_cfg {              /* array map vsb_stcfg, one entry */
	__u64 period_ns;                /* the cpu-clock event's period */
	__u64 threshold_ns;             /* report stalls at least this long */
	__u32 n_prefixes;               /* watched comm prefixes (e.g. "napi/vsb1a2b") */
	__u32 pad;
	char prefix[VSB_STALL_COMM_PREFIXES][VSB_STALL_COMM_LEN];
	__u8 prefix_len[VSB_STALL_COMM_PREFIXES];
};

struct vsb_stall_event {            /* ring buffer vsb_stev */
	__u64 start_ns;                 /* CLOCK_MONOTONIC */
	__u64 len_ns;
	__u32 cpu;
	__u32 kind;                     /* VSB_STALL_* */
	__u32 pid;                      /* RUNQ: the thread kept waiting */
	__u32 pad;
	char comm[VSB_STALL_COMM_LEN];  /* RUNQ: the waiting thread; VCPU: empty */
	char held_by[VSB_STALL_COMM_LEN]; /* RUNQ: the last foreign task that ran on its CPU (the
					 * task switched out when it finally ran, if it waited on
					 * another CPU) */
};

struct vsb_stall_cpu {              /* per-CPU array vsb_stcpu (index 0) */
	__u64 last_ns;                  /* the timer's last firing */
	__u64 ticks;                    /* firings seen */
	__u64 lost_events;              /* stalls the ring buffer had no room for */
	__u64 idle_exit_ns;             /* the CPU last left its idle task: the timer does not run
					 * while a CPU idles, so a gap counts from here */
	__u64 idle_enter_ns;            /* ... and last entered it: a gap ending in idle counts to here */
	__u64 foreign_ns;               /* time this CPU ran tasks not the path's (or idled), up to
					 * cur_start_ns */
	__u64 cur_start_ns;             /* the running task was switched in (0: not seen yet) */
	__u32 cur_foreign;              /* the running task is not the path's */
	__u32 pad;
	__u64 foreign_task;             /* the last foreign task switched in (its task_struct, read
					 * for its name only when a stall is reported: `held_by`) */
	__u64 switch_ns;                /* the last context switch on this CPU (it ran then) */
	__u64 napi_ns;                  /* ... and the end of its last NAPI poll */
	__u64 napi_ns_per_frame;        /* its usual pace in back-to-back polls (a moving average) */
	__u32 napi_full;                /* the last poll used its whole budget */
	__u32 pad2;
	__u64 steal_ns;                 /* the run queue's stolen time at the last reading */
	__u64 steal_reads;              /* readings taken (0 on a kernel that does not account it) */
};

#define VSB_STALL_SEEN_SLOTS 256        /* per-CPU cache of watched() verdicts, by pid */

struct vsb_stall_seen {             /* per-CPU array vsb_stseen: was this pid watched? */
	__u32 pid;
	__u32 gen;                      /* vsb_stgen when decided: any exec, rename or new task
					 * bumps it, so a verdict never outlives a task's name */
	__u32 watched;
	__u32 pad;
};

struct vsb_stall_wait {             /* hash vsb_stwait: a watched thread runnable, not running */
	__u64 since_ns;
	__u64 foreign_at_ns;            /* its CPU's foreign time then (vsb_stall_cpu.foreign_ns + the
					 * running foreign task's share) */
	__u32 cpu;                      /* the CPU it waits on */
	__u32 pad;
};

#endif
