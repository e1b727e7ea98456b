/* probe: what this engine and this kernel can do, as one JSON record. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "engine.h"
#include "io.h"
#include "jout.h"
#include "modes.h"
#include "opts.h"
#include "probe_xdp.h"
#include "tsc.h"

static const char *all_backends[] = {"afpacket", "udp", "afxdp", "dpdk", "xdplive"};

static void backend_entry(struct jout *j, const char *name)
{
	const struct io_ops *ops = io_find(name);
	struct vsb_error e = {0};
	jout_obj(j);
	jout_str(j, "name", name);
	jout_bool(j, "compiled", ops != NULL);
	if (!ops) {
		jout_bool(j, "usable", 0);
		if (!strcmp(name, "afxdp"))
			jout_str(j, "reason", "built without libxdp: install libxdp-dev and libbpf-dev, then "
			         "rebuild (make -C engine)");
		else if (!strcmp(name, "dpdk"))
			jout_str(j, "reason", "built without DPDK (pkg-config libdpdk not found): install "
				 "dpdk-dev, then rebuild (make -C engine)");
		else if (!strcmp(name, "xdplive"))
			jout_str(j, "reason", "built without libbpf or without a clang that targets BPF: "
				 "install libbpf-dev, libxdp-dev and clang, then rebuild (make -C engine)");
		else
			jout_str(j, "reason", "not built into this engine yet");
	} else {
		int rc = ops->available(&e);
		jout_bool(j, "usable", rc == 0);
		if (rc)
			jout_str(j, "reason", e.msg);
		else
			jout_null(j, "reason");
		jout_str(j, "layer", ops->layer == IO_L2 ? "l2" : "l4");
		jout_u64(j, "max_frame", ops->max_frame);
		if (ops->probe_extra)
			ops->probe_extra(ops, j);
	}
	jout_end_obj(j);
}

int probe_main(struct engine *en)
{
	const struct opts *o = &en->o;
	struct vsb_error e = {0};
	if (o->netns && netns_enter(o->netns, &e)) {
		fprintf(stderr, "vswbench-engine: error: %s\n", e.msg);
		return vsb_exit_code(e.code);
	}
	const struct tsc_info *ti = tsc_info();
	struct utsname u;
	uname(&u);
	char r1[256] = "", r2[256] = "";
	int afxdp = probe_afxdp_socket(r1, sizeof(r1));
	int native = probe_native_xdp_veth(r2, sizeof(r2));
	struct jout j;
	jout_begin(&j);
	jout_str(&j, "type", "probe");
	jout_str(&j, "version", VSB_VERSION);
	jout_key_arr(&j, "backends");
	for (unsigned i = 0; i < VSB_ARRAY_SIZE(all_backends); i++)
		backend_entry(&j, all_backends[i]);
	jout_end_arr(&j);
	jout_key_obj(&j, "kernel");
	jout_str(&j, "release", u.release);
	jout_bool(&j, "af_xdp", afxdp);
	if (afxdp) jout_null(&j, "af_xdp_reason"); else jout_str(&j, "af_xdp_reason", r1);
	jout_bool(&j, "native_xdp_veth", native);
	if (native) jout_null(&j, "native_xdp_veth_reason"); else jout_str(&j, "native_xdp_veth_reason", r2);
	jout_end_obj(&j);
	jout_key_obj(&j, "tsc");
	jout_dbl(&j, "hz", ti->hz);
	jout_bool(&j, "invariant", ti->invariant);
	jout_str(&j, "source", ti->source);
	jout_dbl(&j, "cpuid_hz", ti->cpuid_hz);
	jout_end_obj(&j);
	jout_i64(&j, "cpus", sysconf(_SC_NPROCESSORS_ONLN));
	jout_bool(&j, "root", geteuid() == 0);
	jout_end_obj(&j);
	jout_emit(&j);
	return 0;
}
