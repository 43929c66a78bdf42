"""The Jackson network of MPSA sec. 3: routing, traffic equations, M/M/1 and network sojourn.

Two stations, map (1) and reduce (2). A job leaving the map station goes back to map
with q11, on to reduce with q12, out with q10; leaving reduce, it goes to map with q21
and out with q20 (q22 = 0). The routing follows from a mix of the three patterns of
sec. 2.3 by counting visits (Table 1): simple = map, reduce; iterative = that
``iterations`` times; chain = map, map, reduce, map.

With the errata's eq. 1 (lambda3 = lambda4 * q21), eq. 2 gives the station rates
lambda1 = a * lambda and lambda4 = b * lambda with the visit ratios of eq. 12,
a = 1 / (1 - q11 - q12 * q21) and b = q12 * a, and eq. 13 the mean sojourn
T = a / (mu_map - a * lambda) + b / (mu_reduce - b * lambda), infinite when a station
is unstable. A station with s slots and work W slot-seconds per visit serves at
mu = s / W (f1, f2 of sec. 4.3).

Tolerances (relative, unit-free; ``docs/tolerances.md``): a sojourn T meets its target
when ``T <= deadline_limit(target)`` = target (1 + TIME_RTOL) (:func:`meets_deadline`),
and a station is stable when ``mu - lambda > TIME_RTOL * mu``, i.e. its utilisation
rho < 1 - TIME_RTOL (:func:`is_stable`; a station that close to saturation would keep a
job more than 10^9 mean service times). Both tests compare quantities of one unit, so
times multiplied by 10^m (rates divided by 10^m) give the same verdicts: data whose
exact rho is 1 (round numbers, e.g. lambda = 0.25, W = 4, one slot) stay unstable
whatever rounding the rescaled floats carry, where an exact ``mu > lambda`` test would
find some of them stable with a sojourn of 10^16 service times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mropt.model.priority import PriorityInstance
from mropt.model.tolerance import TIME_RTOL, deadline_limit

_PATTERN_VISITS = {"simple": "MR", "chain": "MMRM"}


def pattern_visits(pattern: str, iterations: int) -> str:
    """The station sequence of one job of ``pattern`` (sec. 2.3, Fig. 1): 'M' map, 'R' reduce."""
    if pattern == "iterative":
        return "MR" * iterations
    return _PATTERN_VISITS[pattern]


@dataclass(frozen=True)
class Routing:
    """Routing probabilities of Fig. 3 and the visit ratios a, b of eq. 12."""

    q11: float
    q12: float
    q21: float

    @property
    def q10(self) -> float:
        return 1.0 - self.q11 - self.q12

    @property
    def q20(self) -> float:
        return 1.0 - self.q21

    @property
    def a(self) -> float:
        """Mean visits to the map station per job, a = 1 / (1 - q11 - q12 q21) (eq. 12)."""
        return 1.0 / (1.0 - self.q11 - self.q12 * self.q21)

    @property
    def b(self) -> float:
        """Mean visits to the reduce station per job, b = q12 * a (eq. 12)."""
        return self.q12 * self.a

    def to_dict(self) -> dict[str, float]:
        return {"q11": self.q11, "q12": self.q12, "q10": self.q10, "q21": self.q21, "q20": self.q20}


def _transitions(pattern: str, iterations: int) -> dict[tuple[str, str], int]:
    """How often one job of ``pattern`` moves from one station to the next ('0': out).

    The iterative pattern's counts are written out (n M->R, n - 1 R->M, one R->out)
    instead of walking its 2n visits: ``iterations`` may be large (walking
    "MR" * 2^62 took all the memory).
    """
    if pattern == "iterative":
        return {("M", "R"): iterations, ("R", "M"): iterations - 1, ("R", "0"): 1}
    path = pattern_visits(pattern, iterations) + "0"
    counts: dict[tuple[str, str], int] = {}
    for move in zip(path, path[1:]):
        counts[move] = counts.get(move, 0) + 1
    return counts


def routing_from_pattern_mix(mix: Mapping[str, float], iterations: int) -> Routing:
    """Table 1: count, over the mix, each transition out of map and out of reduce.

    Counting is exact (fractions); with one third of each pattern and 3 iterations it
    gives q12 = 5/7, q11 = 1/7, q10 = 1/7, q21 = 3/5, q20 = 2/5 (sec. 5).
    """
    out_map = {"M": Fraction(0), "R": Fraction(0), "0": Fraction(0)}
    out_reduce = {"M": Fraction(0), "0": Fraction(0)}
    for pattern, weight in mix.items():
        w = Fraction(weight)
        if w == 0:
            continue
        for (here, there), count in _transitions(pattern, iterations).items():
            (out_map if here == "M" else out_reduce)[there] += w * count
    from_map = sum(out_map.values())
    from_reduce = sum(out_reduce.values())
    q21 = out_reduce["M"] / from_reduce if from_reduce else Fraction(0)
    return Routing(q11=float(out_map["M"] / from_map), q12=float(out_map["R"] / from_map), q21=float(q21))


def routing_of(instance: PriorityInstance) -> Routing:
    """The instance's routing: explicit ``routing`` or counted from ``pattern_mix``."""
    if instance.routing is not None:
        r = instance.routing
        return Routing(q11=float(r["q11"]), q12=float(r["q12"]), q21=float(r["q21"]))
    return routing_from_pattern_mix(instance.pattern_mix or {}, instance.iterations)


def traffic_rates(routing: Routing, arrival_rate: float) -> tuple[float, float, float, float]:
    """(lambda1, lambda2, lambda3, lambda4) of eq. 2 (eq. 1 with the errata: lambda3 = lambda4 q21).

    lambda1 enters the map station, lambda2 = lambda1 q11 loops map -> map, lambda3 comes
    back from reduce, lambda4 = lambda1 q12 enters the reduce station.
    """
    lam1 = routing.a * arrival_rate
    return lam1, routing.q11 * lam1, routing.q12 * routing.q21 * lam1, routing.q12 * lam1


def service_rate(slots: float, work: float) -> float:
    """mu = f(s) = s / work: a station with ``slots`` slots and ``work`` slot-seconds per visit (sec. 4.3)."""
    return slots / work


def mm1_utilisation(arrival: float, mu: float) -> float:
    """rho_i = lambda_i / mu_i (before eq. 5)."""
    return arrival / mu if mu > 0 else math.inf


def is_stable(arrival: float, mu: float) -> bool:
    """An M/M/1 station is stable when mu - lambda > TIME_RTOL * mu (rho < 1 - TIME_RTOL, relative)."""
    return mu - arrival > TIME_RTOL * mu


def mm1_state_probability(arrival: float, mu: float, k: int) -> float:
    """eta_ik = (1 - rho_i) rho_i^k (eqs. 5-6); 0 for an unstable station (:func:`is_stable`)."""
    rho = mm1_utilisation(arrival, mu)
    return (1.0 - rho) * rho**k if is_stable(arrival, mu) else 0.0


def mm1_mean_number(arrival: float, mu: float) -> float:
    """L_s = rho / (1 - rho) (eq. 7); infinite for an unstable station (:func:`is_stable`)."""
    rho = mm1_utilisation(arrival, mu)
    return rho / (1.0 - rho) if is_stable(arrival, mu) else math.inf


def mm1_sojourn(arrival: float, mu: float) -> float:
    """T_q = L_s / lambda = 1 / (mu - lambda) (eq. 8); infinite for an unstable station (:func:`is_stable`)."""
    gap = mu - arrival
    return 1.0 / gap if gap > TIME_RTOL * mu else math.inf


def network_sojourn(routing: Routing, arrival_rate: float, mu_map: float, mu_reduce: float) -> float:
    """T = a / (mu_map - a lambda) + b / (mu_reduce - b lambda) (eqs. 10-13); inf when unstable.

    A station a job never visits (visit ratio 0) adds nothing.
    """
    a, b = routing.a, routing.b
    total = a * mm1_sojourn(a * arrival_rate, mu_map)
    if b > 0:
        total += b * mm1_sojourn(b * arrival_rate, mu_reduce)
    return total


def priority_sojourn(
    routing: Routing, arrival_rate: float, map_work: float, reduce_work: float, map_slots: float, reduce_slots: float
) -> float:
    """T_i of eq. 16 for one priority given its map and reduce slots s_i1, s_i2."""
    return network_sojourn(
        routing, arrival_rate, service_rate(map_slots, map_work), service_rate(reduce_slots, reduce_work)
    )


def meets_deadline(sojourn: float, deadline: float) -> bool:
    """Eq. 17 as Algorithm 1 tests it: T_i <= deadline_limit(T_i^target) = target (1 + TIME_RTOL)."""
    return sojourn <= deadline_limit(deadline)


def sojourn_table(
    routing: Routing, arrival_rate: float, map_work: float, reduce_work: float, max_map: int, max_reduce: int
) -> np.ndarray:
    """T_i(x, y) of eq. 16 for every x in 0..max_map map slots and y in 0..max_reduce reduce slots.

    Computed with the same floating-point operations (and the same stability test,
    :func:`is_stable`) as :func:`priority_sojourn`, so the two agree bit for bit; ``inf``
    where a station is unstable. Non-increasing along both axes.
    """
    a, b = routing.a, routing.b
    x = np.arange(max_map + 1, dtype=float)
    y = np.arange(max_reduce + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu_map = x / map_work
        gap_map = mu_map - a * arrival_rate
        ok_map = gap_map > TIME_RTOL * mu_map
        t_map = np.where(ok_map, a * (1.0 / np.where(ok_map, gap_map, 1.0)), np.inf)
        if b > 0:
            mu_red = y / reduce_work
            gap_red = mu_red - b * arrival_rate
            ok_red = gap_red > TIME_RTOL * mu_red
            t_red = np.where(ok_red, b * (1.0 / np.where(ok_red, gap_red, 1.0)), np.inf)
        else:
            t_red = np.zeros_like(y)
    return t_map[:, None] + t_red[None, :]
