/* Namespace, CPU pinning, interface facts and neighbour resolution. */
#ifndef VSB_NETUTIL_H
#define VSB_NETUTIL_H
#include <stdint.h>
#include "common.h"

struct iface_info {
	char name[16];
	int ifindex;
	uint8_t mac[6];
	int has_ip;
	uint32_t ip, mask; /* host order */
	int mtu;
	int up;
};

int netns_enter(const char *name, struct vsb_error *e);
int cpu_pin(int cpu, struct vsb_error *e);
int iface_get(const char *name, struct iface_info *out, struct vsb_error *e);
/* Neighbour table entry (complete) for ip on ifname. 1 found, 0 not. If resolve, first ask the
 * kernel to resolve it (a zero-length UDP datagram towards ip) and poll the table for up to 500 ms. */
int neigh_lookup(const char *ifname, uint32_t ip, uint8_t mac[6], int resolve);
/* Default peer address: the other host of a /30 or /31, else 0. */
uint32_t iface_default_peer(const struct iface_info *i);
int parse_mac(const char *s, uint8_t mac[6]);
int parse_ip4(const char *s, uint32_t *ip); /* host order */
void fmt_mac(const uint8_t mac[6], char out[18]);
void fmt_ip4(uint32_t ip, char out[16]);
/* CPU seconds used by this process (all threads) / this thread. */
double cpu_process_s(void);
double cpu_thread_s(void);

#endif
