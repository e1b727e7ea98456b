"""Per-packet CPU cost model of network-function chains (Raumer et al., sections III-V).

Why a model: a chain's throughput is bounded by CPU cycles, Throughput <= f_CPU / C_total,n
(section III), so a few measured chain lengths predict the others and tell when spreading the chain
over a second core pays off (equation (3)).

Decomposition (what this testbed's data supports). A packet visits the tester (gen + sink), n
network functions (engine `fwd`) and crosses n + 1 veth links (tester -> nf1 -> ... -> nfN ->
tester). Per packet, in cycles:

    C_base  the tester's C_TX + C_RX (+ C_other on its core); with links on the sender's core also
            its outgoing link (Raumer's C_RX/C_TX of eq. (1) are this testbed's two tester links)
    C_nf    one NF: C_VNF + (links on the sender's core) its outgoing C_link
    C_sw    one hop's C_link (+ switch forwarding) where that work runs on a switch core of its own
            (veth/bridge in NAPI-threaded mode, OVS, DPDK PMDs); identified only then, else 0
    C_x     extra cost of a link that crosses cores (Raumer's inter-core minus intra-core
            C_link), charged half to each of the two cores

Equations (1)-(2) on one core (s_core) then read C_total,n = C_base + n C_nf + (n + 1) C_sw
(C_SWdrops is zero at a lossless rate; it is estimated separately from overloaded sweeps). With k
cores each core j carries the elements placed on it; the bottleneck core bounds the chain:
Throughput = f_CPU / max_j C_j, over the cores running an NF or a hop (chain_layout.
bottleneck_loads: the tester's own limit is its calibrated ceiling). With an even split
max_j C_j = C_total / k, which is equation (3)'s k f_CPU / C_total,n; break-even n0 is where the
multi-core prediction overtakes s_core.

Fit: y = f_CPU / measured throughput = the bottleneck core's cost. Weighted least squares on the
relative error, alternating with the choice of bottleneck core until it is stable, from several
starting choices (fit_samples: alternation alone stops at a local optimum); parameters the
layouts cannot separate (collinear columns) are fixed at 0 and reported as not identified; 95 %
confidence intervals from Student's t with the residual variance.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

import numpy as np

from vswbench.errors import UsageError
from vswbench.models.chain_layout import PARAMS
from vswbench.models.chain_layout import PLACEMENTS
from vswbench.models.chain_layout import Layout
from vswbench.models.chain_layout import bottleneck_loads
from vswbench.models.chain_layout import classify
from vswbench.models.chain_layout import layout_for
from vswbench.models.student_t import t_quantile
from vswbench.switches.chain.nf import OVS_KINDS

MEANING = {
    "C_base": "tester path: C_TX + C_RX (+ C_other) of the tester's core",
    "C_nf": "per network function: C_VNF (+ its outgoing C_link when links run on the sender)",
    "C_x": "per link crossing cores: extra over an intra-core link, half on each core",
    "C_sw": "per hop on the switch core: C_link and switch forwarding there",
}
RECOMMENDABLE = ("s_core", "bi", "pbp")
# NF kinds whose elements cannot be spread over cores: every OVS bridge runs in one ovs-vswitchd
# pinned to the switch core (chain_nf.effective_placement), so bi and pbp are s_core for them.
ONE_CORE_NFS = OVS_KINDS
# A group of observations fitted together: switch, NF kind (switches/chain/nf.py: fwd, router, ovs),
# frame size, and whether hops have a switch core of their own
Group = tuple[str, str, int | str, bool]
HORIZON = 64                 # break-even is searched for n = 1..HORIZON
LEVEL = 0.95
MAX_RATE = "max"             # the fitted metric: the maximum forwarding rate (forwarding_rates)
METRIC_TITLES = {MAX_RATE: "maximum forwarding rate", "ndr": "NDR", "peak": "sweep peak"}
RANDOM_STARTS = 64           # fit_samples: random bottleneck choices tried besides the fixed ones
FIT_SEED = 2024              # ... drawn from this seed, so that a fit is reproducible
ASSUMED_F_CPU = 1e9          # no TSC frequency in the data: costs are then ns of CPU per packet


# -- results -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Parameter:
    name: str
    value: float                  # cycles per packet (0 when not identified)
    ci_low: float | None          # 95 % confidence interval (None: no degrees of freedom)
    ci_high: float | None
    identified: bool = True
    meaning: str = ""


@dataclass(frozen=True)
class Prediction:
    n: int
    placement: str
    cores: int
    throughput_pps: float | None  # None: the fitted costs are not positive on the bottleneck
    bottleneck_cpu: int
    bottleneck_cycles: float      # cycles per packet on the bottleneck core
    total_cycles: float           # C_total,n: cycles per packet over all cores
    crossings: int


@dataclass(frozen=True)
class CostModel:
    """A fitted model of one switch and frame size (and link placement: sender or switch core)."""
    switch: str
    frame_size: int | str
    switch_core: bool             # hops have a core of their own (C_sw is in the model)
    f_cpu: float
    f_cpu_source: str             # "tsc" (from the results), "given", "assumed"
    parameters: tuple[Parameter, ...]
    metric: str                   # "max": maximum forwarding rate (forwarding_rates)
    fitted_n: tuple[int, ...]
    observations: int
    rel_residual_sd: float | None
    extras: tuple[Parameter, ...] = ()   # measured breakdown (C_VNF, C_link, ...) and C_SWdrops
    notes: tuple[str, ...] = ()
    nf: str = "fwd"               # how the NFs forward (switches/chain/nf.py): fwd, router, ovs

    @property
    def label(self) -> str:
        size = f"{self.frame_size} B" if isinstance(self.frame_size, int) else str(self.frame_size)
        nf = f" nf={self.nf}" if self.nf != "fwd" else ""
        return f"{self.switch}{nf} {size}" + (" (links on a switch core)" if self.switch_core
                                              else "")

    def value(self, name: str) -> float:
        return next(p.value for p in self.parameters if p.name == name)

    def theta(self) -> np.ndarray:
        return np.array([self.value(n) for n in PARAMS])

    def predict_layout(self, layout: Layout, placement: str = "custom", cores: int = 2) -> Prediction:
        rows = layout.loads()
        loads = {cpu: float(row @ self.theta()) for cpu, row in sorted(rows.items())}
        cpu, worst = max(((c, loads[c]) for c in bottleneck_loads(rows)), key=lambda kv: kv[1])
        tp = self.f_cpu / worst if worst > 0 else None
        return Prediction(layout.n, placement, cores, tp, cpu, worst, sum(loads.values()),
                          layout.crossings)

    def predict(self, n: int, placement: str, cores: int = 2) -> Prediction:
        return self.predict_layout(layout_for(placement, n, cores, self.switch_core), placement,
                                   1 if placement == "s_core" else cores)

    def predict_eq3(self, n: int, placement: str, cores: int = 2) -> float | None:
        """Equation (3)'s ideal split: k f_CPU / C_total,n of the placement (k = 1 for s_core)."""
        p = self.predict(n, placement, cores)
        return p.cores * self.f_cpu / p.total_cycles if p.total_cycles > 0 else None

    def break_even(self, placement: str, cores: int = 2, *, eq3: bool = False) -> int | None:
        """n0 of equation (3): the last n at which s_core is at least as fast as `placement`;
        0 when the placement wins from n = 1, None when s_core still wins at n = HORIZON."""
        def tp(n: int, p: str) -> float:
            v = self.predict_eq3(n, p, cores) if eq3 else self.predict(n, p, cores).throughput_pps
            return v if v is not None else math.inf
        last = 0
        for n in range(1, HORIZON + 1):
            if tp(n, "s_core") >= tp(n, placement):
                last = n
        return None if last == HORIZON else last

    def placements(self, cores: int = 2) -> tuple[str, ...]:
        """The placements this NF kind can take on `cores` cores."""
        return RECOMMENDABLE if cores > 1 and self.nf not in ONE_CORE_NFS else ("s_core",)

    def recommend(self, n: int, cores: int = 2) -> str:
        """The placement with the highest predicted throughput (ties: the fewest cores)."""
        names = self.placements(cores)
        return max(names, key=lambda p: (self.predict(n, p, cores).throughput_pps or 0.0,
                                         -names.index(p)))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> CostModel:
        try:
            params = tuple(Parameter(**p) for p in data["parameters"])
            extras = tuple(Parameter(**p) for p in data.get("extras", ()))
            if {p.name for p in params} != set(PARAMS):
                raise ValueError(f"parameters must be {', '.join(PARAMS)}")
            return CostModel(str(data["switch"]), data["frame_size"], bool(data["switch_core"]),
                             float(data["f_cpu"]), str(data["f_cpu_source"]), params,
                             str(data["metric"]), tuple(int(n) for n in data["fitted_n"]),
                             int(data["observations"]), data.get("rel_residual_sd"), extras,
                             tuple(data.get("notes", ())), str(data.get("nf", "fwd")))
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"not a chain cost model ({exc}): write one with `vswbench model "
                             "fit RESULTS_DIR --out MODEL.json`") from None


# -- fitting -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sample:
    """What the fit needs of one measurement: where the chain ran and how fast it went."""
    layout: Layout
    throughput_pps: float


@dataclass
class _Fit:
    theta: np.ndarray
    identified: list[bool]
    cov: np.ndarray | None
    dof: int
    rel_sd: float | None


def _identifiable(x: np.ndarray) -> list[int]:
    """Columns kept in PARAMS order; one that adds no rank is fixed at 0 (not identified).
    Columns are scaled to unit length first, so the rank test is relative."""
    norms = np.linalg.norm(x, axis=0)
    keep: list[int] = []
    for j in range(x.shape[1]):
        trial = keep + [j]
        if norms[j] > 0 and np.linalg.matrix_rank(x[:, trial] / norms[trial],
                                                  tol=1e-8) == len(trial):
            keep = trial
    return keep


def _wls(rows: np.ndarray, y: np.ndarray) -> _Fit:
    x = rows / y[:, None]                  # relative residuals: (y - x theta) / y
    keep = _identifiable(x)
    theta = np.zeros(len(PARAMS))
    coef, *_ = np.linalg.lstsq(x[:, keep], np.ones(len(y)), rcond=None)
    theta[keep] = coef
    dof = len(y) - len(keep)
    resid = 1.0 - x @ theta
    cov = None
    rel_sd = None
    if dof > 0:
        s2 = float(resid @ resid) / dof
        rel_sd = math.sqrt(s2)
        cov = np.zeros((len(PARAMS), len(PARAMS)))
        cov[np.ix_(keep, keep)] = s2 * np.linalg.inv(x[:, keep].T @ x[:, keep])
    return _Fit(theta, [j in keep for j in range(len(PARAMS))], cov, dof, rel_sd)


def fit_samples(samples: Sequence[Sample], f_cpu: float, max_iter: int = 50,
                starts: int = RANDOM_STARTS) -> _Fit:
    """Least squares of the relative error of max over cores: which core is each sample's
    bottleneck is part of the fit. From a start (a bottleneck core per sample), alternate: solve
    the weighted least squares, then choose each sample's bottleneck under those costs, until
    the choice repeats. Alternation only finds a local optimum (on the fwd chains of
    /tmp/vsbchains5, fitted without n = 3,6,9: residual sum 0.0362 from the start "the core with
    the most elements", 0.0319 from others), so it runs from several starts: that one, "core j
    wherever present" for every core j, and `starts` random choices from a fixed seed (the fit
    is reproducible); the fit with the smallest residual sum is kept."""
    if len({s.layout.n for s in samples}) < 2:
        raise UsageError("the chain model needs throughput at two or more chain lengths: "
                         "measure scenario chain:N for several N (e.g. chain = [1, 2, 4, 8])")
    y = np.array([f_cpu / s.throughput_pps for s in samples])
    loads = [bottleneck_loads(s.layout.loads()) for s in samples]
    cores = [sorted(ld) for ld in loads]
    first = [max(ld, key=lambda c: float(ld[c].sum())) for ld in loads]   # most elements
    every = sorted({c for cs in cores for c in cs})
    rnd = random.Random(FIT_SEED)
    picks = [first, *([j if j in cs else cs[-1] for cs in cores] for j in every),
             *([rnd.choice(cs) for cs in cores] for _ in range(starts))]
    best: tuple[float, _Fit] | None = None
    tried: set[tuple[int, ...]] = set()
    for pick in picks:
        if tuple(pick) in tried:
            continue
        sse, fit = _alternate(loads, y, pick, max_iter, tried)
        if best is None or sse < best[0] - 1e-12:
            best = (sse, fit)
    assert best is not None
    return best[1]


def _alternate(loads: list[dict[int, np.ndarray]], y: np.ndarray, pick: list[int],
               max_iter: int, tried: set[tuple[int, ...]]) -> tuple[float, _Fit]:
    """One descent from `pick`: the best (residual sum, fit) it saw. Every bottleneck choice it
    visits goes into `tried` (a later start through it would follow the same path)."""
    best: tuple[float, _Fit] | None = None
    for _ in range(max_iter):
        tried.add(tuple(pick))
        fit = _wls(np.array([ld[c] for ld, c in zip(loads, pick)]), y)
        pred = np.array([max(float(r @ fit.theta) for r in ld.values()) for ld in loads])
        sse = float((((y - pred) / y) ** 2).sum())
        if best is None or sse < best[0] - 1e-12:
            best = (sse, fit)
        pick = [max(ld, key=lambda c: float(ld[c] @ fit.theta)) for ld in loads]
        if tuple(pick) in tried:
            break
    assert best is not None
    return best


def parameters(fit: _Fit, level: float = LEVEL) -> tuple[Parameter, ...]:
    t = t_quantile(0.5 + level / 2, fit.dof) if fit.cov is not None else None
    out = []
    for j, name in enumerate(PARAMS):
        value = float(fit.theta[j])
        if not fit.identified[j]:
            out.append(Parameter(name, 0.0, None, None, False, MEANING[name]))
            continue
        half = None if fit.cov is None or t is None else t * math.sqrt(max(0.0, fit.cov[j, j]))
        out.append(Parameter(name, value, None if half is None else value - half,
                             None if half is None else value + half, True, MEANING[name]))
    return tuple(out)


# -- observations and validation ---------------------------------------------------------------
@dataclass(frozen=True)
class ChainObservation:
    """One measured maximum throughput of a chain (a search's NDR or a sweep's peak)."""
    switch: str
    frame_size: int | str
    n: int
    placement: str                # as the campaign named it (execute.placement_cpus)
    layout: Layout                # the cores it really ran on (from the result's placement)
    throughput_pps: float
    metric: str                   # "ndr" | "peak" as measured; "max" once combined
    lower_bound: bool = False     # generator-bound: the chain forwards at least this much
    tsc_hz: float | None = None
    forwarding_mode: str = ""
    cycles_per_packet: float | None = None   # measured, all cores, near the NDR / at the peak
    key: str = ""
    nf: str = "fwd"               # how the NFs forward (switches/chain/nf.py): fitted separately
    repetition: int = 0           # the campaign's repetition (0-based): forwarding_rates

    @property
    def pattern(self) -> str:
        """Raumer's name of the layout it ran on: the campaign's name when the layout fits it,
        else the name that does (campaign/runner.py's bi/pbp may be Raumer's pbp/bi)."""
        if self.placement in PLACEMENTS and self.layout.nf_cpus:
            k = max(2, max(self.layout.nf_cpus) + 1)
            sc = self.layout.switch_cpu is not None
            if layout_for(self.placement, self.n, k, sc) == self.layout:
                return self.placement
        return classify(self.layout)

    @property
    def group(self) -> Group:
        return (self.switch, self.nf, self.frame_size, self.layout.switch_cpu is not None)


@dataclass(frozen=True)
class PointCheck:
    """Measured against predicted throughput at one observation."""
    n: int
    placement: str                # Raumer's name of the measured layout
    measured_pps: float
    predicted_pps: float | None
    in_fit: bool
    lower_bound: bool
    key: str = ""

    @property
    def error(self) -> float | None:
        """Relative error of the prediction: predicted / measured - 1."""
        if self.predicted_pps is None or not self.measured_pps:
            return None
        return self.predicted_pps / self.measured_pps - 1.0


def groups(observations: Sequence[ChainObservation]) -> dict[Group, list[ChainObservation]]:
    out: dict[Group, list[ChainObservation]] = {}
    for o in observations:
        out.setdefault(o.group, []).append(o)
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], kv[0][1], str(kv[0][2]),
                                                    kv[0][3])))


def forwarding_rates(observations: Sequence[ChainObservation]) -> list[ChainObservation]:
    """Raumer et al.'s throughput, the maximum forwarding rate, once per chain length and layout.

    Within one repetition it is the higher of the search's NDR (forwarded without loss) and the
    sweep's peak (forwarded under overload), RFC 2285's MFR over that repetition's
    forwarding-rate measurements: either metric alone misleads (a quick search's zero-loss rate
    moves with sporadic drops, nf=ovs: 24.1 kpps at n = 4, 27.8 kpps at n = 5, one run; a sweep
    whose loads all lie beyond a long chain's capacity peaks below it, fwd n = 10: NDR 42 kpps,
    sweep peak 30 kpps at its lowest load, 115 kpps offered). Over repetitions it is the median,
    not the highest: single runs of one point moved by up to 33 % between two runs of
    specs/chains.toml, and one quick search of pbp n = 3 stopped at 26.9 kpps (a transient 19 %
    loss at 22 kpps) where its repetition measured 106.3; the highest of several noisy rates is
    biased upward, the median ignores one outlier in three. A generator-bound rate only says
    "at least": the result is one when any repetition it rests on is."""
    reps: dict[tuple[int, Layout], dict[int, ChainObservation]] = {}
    for o in observations:
        if o.metric not in ("ndr", "peak", MAX_RATE) or o.throughput_pps <= 0:
            continue
        per_rep = reps.setdefault((o.n, o.layout), {})
        best = per_rep.get(o.repetition)
        if best is None or o.throughput_pps > best.throughput_pps:
            per_rep[o.repetition] = o
    out = []
    for per_rep in reps.values():
        ranked = sorted(per_rep.values(), key=lambda o: (o.throughput_pps, o.repetition))
        mid = ranked[(len(ranked) - 1) // 2: len(ranked) // 2 + 1]     # one, or the two middle
        out.append(replace(mid[0], metric=MAX_RATE,
                           throughput_pps=sum(o.throughput_pps for o in mid) / len(mid),
                           lower_bound=any(o.lower_bound for o in mid)))
    return out


def usable(observations: Sequence[ChainObservation]) -> list[ChainObservation]:
    """What the fit uses: the maximum forwarding rates, without generator-bound lower bounds."""
    return [o for o in forwarding_rates(observations) if not o.lower_bound]


def fit(observations: Sequence[ChainObservation], *, f_cpu: float | None = None,
        exclude_n: Sequence[int] = (), extras: Sequence[Parameter] = (),
        notes: Sequence[str] = ()) -> CostModel:
    """Fit one group's model (one switch, NF kind, frame size and link placement)."""
    if len({o.group for o in observations}) > 1:
        raise UsageError("fit one switch, NF kind and frame size at a time (chain_cost.groups)")
    data = [o for o in usable(observations) if o.n not in set(exclude_n)]
    if not data:
        raise UsageError("no usable chain throughput (all generator-bound or held out)")
    tscs = sorted(o.tsc_hz for o in observations if o.tsc_hz)
    source = "given" if f_cpu else ("tsc" if tscs else "assumed")
    f = f_cpu or (tscs[len(tscs) // 2] if tscs else ASSUMED_F_CPU)
    result = fit_samples([Sample(o.layout, o.throughput_pps) for o in data], f)
    all_notes = list(notes)
    missing = [p.name for p in parameters(result) if not p.identified]
    if missing:
        all_notes.append(f"{', '.join(missing)} not identified by these layouts: fixed at 0, "
                         "their cost is folded into the others")
    if "C_x" in missing:
        all_notes.append("no layout with a core crossing was fitted: multi-core predictions "
                         "(bi, pbp) assume crossings cost nothing, an upper bound")
    if source == "assumed":
        all_notes.append("no TSC frequency in the results: costs are ns of CPU time per packet "
                         "(f_CPU = 1 GHz); pass --f-cpu for cycles")
    first = observations[0]
    return CostModel(first.switch, first.frame_size, first.layout.switch_cpu is not None, f,
                     source, parameters(result), data[0].metric,
                     tuple(sorted({o.n for o in data})), len(data), result.rel_sd,
                     tuple(extras), tuple(all_notes), first.nf)


def check(model: CostModel, observations: Sequence[ChainObservation]) -> list[PointCheck]:
    rows = [PointCheck(o.n, o.pattern, o.throughput_pps,
                       model.predict_layout(o.layout).throughput_pps, o.n in model.fitted_n,
                       o.lower_bound, o.key)
            for o in forwarding_rates(observations)]
    return sorted(rows, key=lambda r: (r.n, PLACEMENTS.index(r.placement)
                                       if r.placement in PLACEMENTS else 9))


def holdout(observations: Sequence[ChainObservation], held: Sequence[int], *,
            f_cpu: float | None = None) -> tuple[CostModel, list[PointCheck]]:
    """Fit without the chain lengths `held`, then predict every observation (held-out rows have
    in_fit False): the test of the model is the error on those."""
    measured = {o.n for o in usable(observations)}
    unknown = sorted(set(held) - measured)
    if unknown:
        raise UsageError(f"--holdout {','.join(map(str, unknown))}: no usable measurement at that "
                         f"chain length (measured: {','.join(map(str, sorted(measured)))})")
    model = fit(observations, f_cpu=f_cpu, exclude_n=held)
    return model, check(model, observations)


def leave_one_n_out(observations: Sequence[ChainObservation], *,
                    f_cpu: float | None = None) -> dict[str, float | None]:
    """Per observation key: the error when its chain length was left out of the fit (no free
    choice of what to hold out; lengths whose removal leaves fewer than two are skipped)."""
    lengths = sorted({o.n for o in usable(observations)})
    errors: dict[str, float | None] = {}
    for n in lengths if len(lengths) > 2 else []:
        model = fit(observations, f_cpu=f_cpu, exclude_n=[n])
        for row in check(model, [o for o in observations if o.n == n]):
            errors[row.key] = row.error
    return errors


def measured_break_even(observations: Sequence[ChainObservation], placement: str) -> int | None:
    """n0 from the measurements alone: the last measured n at which s_core was at least as fast
    as `placement`, if `placement` won at every larger measured n (else None)."""
    def mean_by_n(name: str) -> dict[int, float]:
        vals: dict[int, list[float]] = {}
        for o in usable(observations):
            if o.pattern == name:
                vals.setdefault(o.n, []).append(o.throughput_pps)
        return {n: sum(v) / len(v) for n, v in vals.items()}
    single, multi = mean_by_n("s_core"), mean_by_n(placement)
    common = sorted(set(single) & set(multi))
    if not common or single[common[-1]] >= multi[common[-1]]:
        return None
    return max([n for n in common if single[n] >= multi[n]], default=0)
