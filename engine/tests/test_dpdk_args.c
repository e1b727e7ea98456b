/* Unit tests: the dpdk backend's pure logic (dpdk_eal.c): vdev string checks, the EAL file prefix,
 * CPU lists, the EAL argument list, pool and memory sizes. Needs no DPDK. */
#include <stdio.h>
#include <string.h>

#include "dpdk_eal.h"
#include "check.h"

static int ok(const char *vdev)
{
	char name[DPDK_NAME_MAX + 1], msg[512];
	int rc = dpdk_vdev_check(vdev, name, sizeof(name), msg, sizeof(msg));
	if (rc)
		fprintf(stderr, "  unexpected rejection of %s: %s\n", vdev, msg);
	return rc == 0;
}

/* rejected, and the message contains `want` */
static int bad(const char *vdev, const char *want)
{
	char msg[512] = "";
	if (dpdk_vdev_check(vdev, NULL, 0, msg, sizeof(msg)) == 0) {
		fprintf(stderr, "  accepted %s\n", vdev);
		return 0;
	}
	if (!strstr(msg, want)) {
		fprintf(stderr, "  %s: message lacks '%s': %s\n", vdev, want, msg);
		return 0;
	}
	return 1;
}

static void test_vdev(void)
{
	CHECK(ok("net_memif0,role=client,socket=/run/vsb1234/memif.sock"));
	CHECK(ok("net_memif1,role=server,socket=/run/vsb1234/m.sock,socket-abstract=no,rsize=11"));
	CHECK(ok("virtio_user0,path=/run/vsb1234/vhost.sock"));
	CHECK(ok("net_virtio_user3,path=/run/vsb/v.sock,queue_size=1024"));
	CHECK(ok("net_vhost0,iface=/run/vsb1234/vhost.sock,queues=1"));
	CHECK(ok("net_af_packet0,iface=vsb12a0"));
	CHECK(ok("net_af_xdp0,iface=vsb12a0,start_queue=0"));
	CHECK(ok("net_null0"));
	CHECK(ok("net_ring0"));
	CHECK(ok("net_tap0,iface=vsbtap0"));
	CHECK(ok("net_pcap0,iface=[vsb0],x=[a,b]")); /* bracket lists may hold commas */

	char name[DPDK_NAME_MAX + 1];
	CHECK_EQ(dpdk_vdev_check("net_memif7,role=server,socket=/x", name, sizeof(name), NULL, 0), 0);
	CHECK(strcmp(name, "net_memif7") == 0);
	CHECK_EQ(dpdk_vdev_check("virtio_user0,path=/p", name, sizeof(name), NULL, 0), 0);
	CHECK(strcmp(name, "virtio_user0") == 0);

	CHECK(bad("", "empty"));
	CHECK(bad("foo0,x=1", "names no DPDK virtual device driver"));
	CHECK(bad("0net_memif", "start with a letter"));
	CHECK(bad("net-memif0", "'-' in the device name"));
	CHECK(bad("net_memif0,role=client", "needs socket=PATH"));
	CHECK(bad("net_memif0,role=master,socket=/x", "role=server or role=client"));
	CHECK(bad("virtio_user0", "needs path=PATH"));
	CHECK(bad("virtio_user0,queue_size=256", "needs path=PATH"));
	CHECK(bad("net_vhost0,path=/x", "needs iface=PATH"));
	CHECK(bad("net_af_packet0", "needs iface=IF"));
	CHECK(bad("net_null0,", "empty or invalid key"));
	CHECK(bad("net_null0,,a=b", "empty or invalid key"));
	CHECK(bad("net_null0,size", "has no value"));
	CHECK(bad("net_null0,size=", "empty value"));
	CHECK(bad("net_null0,x=[a,b", "'[' without ']'"));
	CHECK(bad("net_null0,x=1 y=2", "space"));
	CHECK(bad("net_null0,x=\t", "space or control"));
	char longv[400];
	memset(longv, 'a', sizeof(longv));
	memcpy(longv, "net_null0,x=", 12);
	longv[sizeof(longv) - 1] = 0;
	CHECK(bad(longv, "at most 255"));
	char longn[80];
	memset(longn, 'a', sizeof(longn));
	memcpy(longn, "net_null", 8);
	longn[sizeof(longn) - 1] = 0;
	CHECK(bad(longn, "longer than 63"));

	char v[64];
	CHECK_EQ(dpdk_vdev_arg("net_memif0,role=client,socket=/run/x.sock", "socket", v, sizeof(v)), 1);
	CHECK(strcmp(v, "/run/x.sock") == 0);
	CHECK_EQ(dpdk_vdev_arg("net_memif0,role=client,socket=/run/x.sock", "role", v, sizeof(v)), 1);
	CHECK(strcmp(v, "client") == 0);
	CHECK_EQ(dpdk_vdev_arg("net_memif0,role=client", "socket", v, sizeof(v)), 0);
	CHECK_EQ(dpdk_vdev_arg("net_memif0,xsocket=1", "socket", v, sizeof(v)), 0);
}

static void test_prefix(void)
{
	char p[DPDK_PREFIX_MAX + 1], msg[256];
	CHECK_EQ(dpdk_prefix(NULL, 4242, p, sizeof(p), msg, sizeof(msg)), 0);
	CHECK(strcmp(p, "vsbdpdk4242") == 0);
	CHECK_EQ(dpdk_prefix("", 7, p, sizeof(p), msg, sizeof(msg)), 0);
	CHECK(strcmp(p, "vsbdpdk7") == 0);
	CHECK_EQ(dpdk_prefix("vsb3fa2-gen", 7, p, sizeof(p), msg, sizeof(msg)), 0);
	CHECK(strcmp(p, "vsb3fa2-gen") == 0);
	CHECK_EQ(dpdk_prefix("rte", 7, p, sizeof(p), msg, sizeof(msg)), -1);
	CHECK(strstr(msg, "must start with 'vsb'") != NULL);
	CHECK_EQ(dpdk_prefix("vsb/../x", 7, p, sizeof(p), msg, sizeof(msg)), -1);
	CHECK_EQ(dpdk_prefix("vsb x", 7, p, sizeof(p), msg, sizeof(msg)), -1);
	CHECK_EQ(dpdk_prefix("vsbaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 7, p, sizeof(p), msg,
			     sizeof(msg)), -1);
}

static void test_cpulist(void)
{
	unsigned char bits[16];
	char out[64];
	memset(bits, 0, sizeof(bits));
	CHECK_EQ(dpdk_cpulist(bits, 128, out, sizeof(out)), -1);
	bits[0] = 0x01;
	CHECK_EQ(dpdk_cpulist(bits, 128, out, sizeof(out)), 0);
	CHECK(strcmp(out, "0") == 0);
	bits[0] = 0x03;
	CHECK_EQ(dpdk_cpulist(bits, 128, out, sizeof(out)), 0);
	CHECK(strcmp(out, "0-1") == 0);
	bits[0] = 0x4d; /* 0, 2, 3, 6 */
	bits[1] = 0x80; /* 15 */
	bits[2] = 0x01; /* 16 */
	CHECK_EQ(dpdk_cpulist(bits, 128, out, sizeof(out)), 0);
	CHECK(strcmp(out, "0,2-3,6,15-16") == 0);
	CHECK_EQ(dpdk_cpulist(bits, 128, out, 4), -1); /* no room */
}

/* index of arg in a, -1 if absent */
static int find(const struct dpdk_argv *a, const char *arg)
{
	for (int i = 0; i < a->argc; i++)
		if (!strcmp(a->argv[i], arg))
			return i;
	return -1;
}

static void test_argv(void)
{
	static struct dpdk_argv a;
	char msg[512], line[1024];
	const char *vdevs[] = {"net_memif0,role=server,socket=/run/vsb1/m.sock",
			       "net_memif1,role=client,socket=/run/vsb1/m.sock"};
	struct dpdk_eal_cfg c = {.prefix = "vsbdpdk1", .cpu = 1, .cpulist = "0-1", .vdevs = vdevs, .nvdev = 2,
				 .mem_mb = 300, .hugepages = 0, .extra = NULL, .debug = 0};
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), 0);
	CHECK(a.argv[a.argc] == NULL);
	dpdk_argv_str(&a, line, sizeof(line));
	CHECK(strcmp(line, "--no-pci --no-telemetry --file-prefix vsbdpdk1 --log-level=4 --lcores 0@1 --no-huge "
			   "-m 300 --vdev net_memif0,role=server,socket=/run/vsb1/m.sock --vdev "
			   "net_memif1,role=client,socket=/run/vsb1/m.sock") == 0);
	if (strcmp(line, "--no-pci --no-telemetry --file-prefix vsbdpdk1 --log-level=4 --lcores 0@1 --no-huge "
			 "-m 300 --vdev net_memif0,role=server,socket=/run/vsb1/m.sock --vdev "
			 "net_memif1,role=client,socket=/run/vsb1/m.sock"))
		fprintf(stderr, "  got: %s\n", line);
	CHECK(strcmp(a.prefix, "vsbdpdk1") == 0);
	CHECK_EQ(a.user_mem, 0);
	CHECK_EQ(a.hugepages, 0);

	/* unpinned: lcore 0 floats over the process's CPUs; hugepages; debug */
	c.cpu = -1;
	c.hugepages = 1;
	c.debug = 1;
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), 0);
	CHECK(find(&a, "0@(0-1)") == find(&a, "--lcores") + 1);
	CHECK(find(&a, "--no-huge") < 0);
	CHECK(find(&a, "--huge-unlink=always") > 0 && find(&a, "--single-file-segments") < 0);
	CHECK(find(&a, "-m") < 0); /* dynamic memory */
	CHECK(find(&a, "--log-level=8") > 0);
	CHECK_EQ(a.hugepages, 1);
	c.cpulist = NULL;
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), -1);
	c.cpulist = "0-1";
	c.hugepages = 0;
	c.debug = 0;

	/* extra args come last; a memory option there replaces the engine's */
	c.extra = "  --no-huge -m 1024\t--in-memory ";
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), 0);
	CHECK_EQ(a.user_mem, 1);
	CHECK_EQ(find(&a, "1024"), a.argc - 2);
	CHECK(find(&a, "300") < 0);
	CHECK(strcmp(a.argv[a.argc - 1], "--in-memory") == 0);
	c.extra = "-m512";
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), 0);
	CHECK_EQ(a.user_mem, 1);
	c.extra = "-d /usr/lib/x.so";
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), 0);
	CHECK_EQ(a.user_mem, 0);
	CHECK(find(&a, "--no-huge") > 0);
	CHECK(strcmp(a.argv[a.argc - 1], "/usr/lib/x.so") == 0);

	/* --file-prefix in extra replaces the engine's (both spellings), and must start with vsb */
	c.extra = "--file-prefix vsbother";
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), 0);
	CHECK(strcmp(a.prefix, "vsbother") == 0);
	CHECK(strcmp(a.argv[find(&a, "--file-prefix") + 1], "vsbother") == 0);
	CHECK(find(&a, "vsbdpdk1") < 0);
	c.extra = "--file-prefix=vsbeq";
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), 0);
	CHECK(strcmp(a.prefix, "vsbeq") == 0);
	CHECK(find(&a, "--file-prefix=vsbeq") < 0);
	c.extra = "--file-prefix rte";
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), -1);
	CHECK(strstr(msg, "vsb") != NULL);
	c.extra = "--file-prefix";
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), -1);

	/* lcores and vdevs belong to --cpu and --port */
	const char *refused[] = {"-l 1", "-l1", "-c 0x3", "--lcores 0@1", "--main-lcore=1", "--vdev net_null0",
				 "--vdev=net_null0"};
	for (unsigned i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		c.extra = refused[i];
		msg[0] = 0;
		CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), -1);
		CHECK(strstr(msg, "--cpu") != NULL || strstr(msg, "--port") != NULL);
	}
	/* too many words */
	static char many[1200];
	many[0] = 0;
	for (int i = 0; i < 100; i++)
		strcat(many, "-d x ");
	c.extra = many;
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), -1);
	c.extra = NULL;
	c.prefix = "bad";
	CHECK_EQ(dpdk_eal_argv(&c, &a, msg, sizeof(msg)), -1);
}

static void test_sizes(void)
{
	CHECK_EQ(dpdk_pool_size(1, 1024), 4095);    /* 1 * (2048 + 512) + 1024 = 3584 -> 4095 */
	CHECK_EQ(dpdk_pool_size(2, 1024), 8191);    /* 6144 */
	CHECK_EQ(dpdk_pool_size(1, 8192), 32767);   /* 17920 */
	CHECK_EQ(dpdk_pool_size(0, 0), 4095);
	unsigned n = dpdk_pool_size(2, 4096);
	CHECK((n & (n + 1)) == 0 && n >= 2 * (2 * 4096 + 512) + 1024);
	CHECK_EQ(dpdk_mem_mb(4095), 73);                /* 9 + 64 */
	CHECK_EQ(dpdk_mem_mb(8191), 83);                /* 19 + 64: loop and fwd's two 1024-frame rings */
	CHECK_EQ(dpdk_mem_mb(32767), 143);              /* 79 + 64: a sink's 8192-frame ring */
	CHECK_EQ(dpdk_mem_mb(0), DPDK_MEM_MIN_MB);
	CHECK(dpdk_mem_mb(262143) >= 262143u * 2368 / (1024 * 1024) + 64);
}

int main(void)
{
	test_vdev();
	test_prefix();
	test_cpulist();
	test_argv();
	test_sizes();
	if (failures) {
		fprintf(stderr, "test_dpdk_args: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_dpdk_args: ok\n");
	return 0;
}
