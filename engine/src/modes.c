/* The table of modes: name, ports, defaults, entry point (modes.h). A new mode adds its row here. */
#include <stddef.h>
#include "modes.h"

const struct mode_def vsb_modes[] = {
	{.id = MODE_PROBE, .name = "probe", .ports = PORTS_NONE, .command = probe_main},
	{.id = MODE_GEN, .name = "gen", .ports = PORTS_TX, .sends_first = 1, .counts = COUNT_SENT,
	 .in_control = 1, .trial = run_gen},
	/* a sleeping sink rides out wake-up delays of tens of ms: a big ring, the V3 block ring */
	{.id = MODE_SINK, .name = "sink", .ports = PORTS_RX, .rx_ring_v3 = 1, .ring = 8192,
	 .counts = COUNT_RECEIVED, .trial = run_sink},
	{.id = MODE_LOOP, .name = "loop", .ports = PORTS_LOOP, .busy_poll = 1, .sends_first = 1,
	 .counts = COUNT_SENT_RECEIVED, .in_control = 1, .trial = run_loop},
	{.id = MODE_REFLECT, .name = "reflect", .ports = PORTS_TXRX, .busy_poll = 1, .relays = "reflect",
	 .counts = COUNT_RELAYED, .trial = run_reflect},
	{.id = MODE_FWD, .name = "fwd", .ports = PORTS_AB, .busy_poll = 1, .relays = "forward",
	 .counts = COUNT_RELAYED, .trial = run_fwd},
	/* its trials' rows decide the rest (loop or gen) */
	{.id = MODE_CONTROL, .name = "control", .ports = PORTS_LOOP, .busy_poll = 1, .sends_first = 1,
	 .command = control_main},
	{.name = NULL},
};
