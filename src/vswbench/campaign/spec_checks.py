"""The cross-key checks of one [[study]] (campaign/spec.py runs them after each value's own
check): what the command line refuses for a combination of flags, a spec refuses for the same
combination of keys, at load, so that `run --dry-run` refuses what `run` would (measure/plan.py
plan_trial and measure/method.py plan_method make the same checks for the flags). What depends
on this machine (its CPUs, the engine's probe) is checked when the campaign starts
(campaign/runner.py check_points)."""

from __future__ import annotations

from typing import Any

from vswbench.errors import UsageError

OptionTable = tuple[tuple[str, str], ...]


def churn_problems(i: int, v: dict[str, Any]) -> list[str]:
    """churn = ["off", "1000/0.5", ...] needs a userspace L2 tester (io xdplive and udp send a
    fixed set of flows) and flows 1 (churn replaces them)."""
    churns = v.get("churn") or [None]
    if all(c is None for c in churns):
        return []
    found = []
    ios = [x for x in v.get("io") or [] if x in ("xdplive", "udp")]
    if ios:
        found.append(f"study {i}, churn: io {', '.join(ios)} sends a fixed set of flows; churn "
                     "needs io auto, afpacket or afxdp")
    if any(f > 1 for f in v.get("flows") or []):
        found.append(f"study {i}, churn: churn replaces the fixed set of flows; give flows = [1] "
                     "(or leave it out) in a study with churn")
    return found


def option_problems(i: int, switches: list[str], tables: list[OptionTable]) -> list[str]:
    """Each switch checks the option keys it reads and the values it knows (bridge: bridge_fdb;
    ovs: ovs_mode, flow_table, clones; the DPDK switches: dpdk_port), as plan_trial does."""
    from vswbench.switches.catalog import all_switches

    classes, found = all_switches(), []
    for table in tables:
        for name in switches:
            if name not in classes:
                continue
            try:
                problem = classes[name].unread_options(dict(table))
                if problem:
                    raise UsageError(problem)
                classes[name].check_options(dict(table))
            except UsageError as e:
                found.append(f"study {i}, options: {e}")
    return list(dict.fromkeys(found))


def io_problems(i: int, switches: list[str], ios: list[str],
                tables: list[OptionTable]) -> list[str]:
    """An io a switch's tester cannot use (afxdp on ovs-dpdk: it would be ignored and
    mislabelled), or xdplive into a switch whose ports drop what the kernel transmits (macvlan,
    ovs; measure/plan.engine_io refuses it for --io xdplive)."""
    from vswbench.switches.catalog import all_switches

    classes, found = all_switches(), []
    for io in ios:
        for name in switches:
            cls = classes.get(name)
            if cls is None:
                continue
            problem = cls.unread_options((), io)
            if problem:
                found.append(f"study {i}, io: {problem}")
            elif io == "xdplive" and cls.port_kind != "dpdk":
                for table in tables or [()]:
                    tx = cls.kernel_tx_problem(dict(table))
                    if tx:
                        found.append(f"study {i}, io: xdplive: {tx}; give {name} io afpacket "
                                     "or afxdp (or auto), in a study of its own")
    return list(dict.fromkeys(found))


def shape_problems(i: int, switches: list[str], raw: dict[str, Any],
                   sizes: list[Any]) -> list[str]:
    """shape_pps belongs to switch shaped, which needs it and one frame size (its byte rate)."""
    from vswbench.switches.catalog import calibration_switches

    found = []
    shaped = bool(set(calibration_switches()) & set(switches))
    if "shape_pps" in raw and switches and not shaped:
        found.append(f"study {i}, shape_pps: only switch \"shaped\" uses it, and this study "
                     "does not include shaped")
    if shaped and "shape_pps" not in raw:
        found.append(f"study {i}, shape_pps: switch shaped needs shape_pps = [...] (the rate "
                     "it is shaped to, e.g. \"100k\")")
    if shaped and any(isinstance(s, str) for s in sizes):
        found.append(f"study {i}, size: switch shaped computes its byte rate for one frame "
                     "size: give sizes in bytes, not imix, in a study with shaped")
    return found
