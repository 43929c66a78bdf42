"""Locality analysis of delay scheduling and DDRF (DDRF paper sec. 3.2 and 4.2).

Model (the paper's): M nodes, racks of G nodes, R replicas of each input, a job with N
tasks. When the job has K tasks left, a node holds input of one of them with
probability ``p_K = 1 - (1 - K/M)^R`` (sec. 3.2), and a node's rack holds some of it
with probability ``h_K = 1 - (1 - K G/M)^R`` (replicas of each copy on distinct
racks; mropt's reading, the paper prints ``q = 1 - (1 - K/(M-G))^R``), so a node is
rack-local but not node-local with probability ``q_K = h_K - p_K``. Free slots come
up on uniformly random nodes, each offer independently local with these probabilities.

The skip rule (sec. 4.1): offers 1..E1 are taken only node-local; offers E1+1..E2
node- or rack-local; if the E2-th offer misses too, the task launches there,
non-local. Delay scheduling (sec. 3.2) is E1 = E2 = D. Per K, exactly::

    P_node = 1 - a^E1 + a^E1 (1 - b^(E2-E1)) p/(p+q)     a = 1-p, b = 1-p-q
    P_rack =            a^E1 (1 - b^(E2-E1)) q/(p+q)
    P_any  =            a^E1 b^(E2-E1)

Two kinds of numbers, always named:

* **exact** (``*_exact``): the averages over K = 1..N of these probabilities, locality
  counted 1 (node), theta (rack) and 0 -- a probability, never above 1;
* **bound** (``*_bound``): the paper's formulas as printed: L(D)'s lower bound and
  the bound on D (sec. 3.2), and DDRF's ``L(E) = L(E1) + L(E2)`` (sec. 4.2), which
  chains loose inequalities and can exceed 1 (errata in ``papers/README.md``).

Monte Carlo (:func:`monte_carlo`) simulates the skip rule with replicas placed on
random racks and nodes and slots freeing on random nodes; with ``redraw="offer"`` (the
independence the formulas assume) it must agree with the exact values, with
``redraw="task"`` (replicas fixed while a task waits) it shows what that assumption
costs. The paper's Table 2 and the data of Figs 1-4 are in :mod:`mropt.fairness.figures`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mropt.model.errors import InputError

#: the most tasks N of a job: the exact values sum over K = 1..N, a Python loop (N = 1e5: about 1 s per
#: (E1, E2) pair); the papers' jobs have 20
MAX_TASKS = 100_000
#: Monte Carlo's draws (of replica places, K by K): per K, trials x E2 x R x M/G numbers at once (about
#: 40 bytes each at the peak: 0.5 GB at the cap), and N times as many in all (about 2 s of CPU per 1e8)
MC_MAX_DRAWS_PER_K = 10_000_000
MC_MAX_DRAWS = 200_000_000


def _check(N: int, R: int, M: int, G: int = 1) -> None:
    if not (N >= 1 and R >= 1 and M >= 1 and G >= 1):
        raise InputError(f"locality: N, R, M and G must be >= 1, got N={N}, R={R}, M={M}, G={G}")
    if N > MAX_TASKS:
        raise InputError(f"locality: a job of N={N} tasks is more than this analysis takes (at most {MAX_TASKS:,})")
    if N > M:
        raise InputError(f"locality: a job of N={N} tasks needs at least N nodes, got M={M}")


def preferred_fraction(K: int, R: int, M: int) -> float:
    """p_K = 1 - (1 - K/M)^R: the fraction of nodes with input of the K remaining tasks (sec. 3.2)."""
    return 1.0 - (1.0 - K / M) ** R


def rack_fraction(K: int, R: int, M: int, G: int) -> float:
    """h_K = 1 - (1 - K G / M)^R: fraction of nodes whose rack holds some of that input."""
    return 1.0 - max(0.0, 1.0 - K * G / M) ** R


# -- delay scheduling, sec. 3.2 -----------------------------------------------------------
def delay_locality_exact(D: int, N: int, R: int, M: int) -> float:
    """L(D) = (1/N) sum_K [1 - (1 - K/M)^(R D)], exact under the model (the first line of sec. 3.2's derivation)."""
    _check(N, R, M)
    return float(np.mean([1.0 - (1.0 - K / M) ** (R * D) for K in range(1, N + 1)]))


def delay_locality_bound(D: float, N: int, R: int, M: int) -> float:
    """The paper's lower bound: L(D) >= 1 - e^(-RD/M) / (N (1 - e^(-RD/M))) (sec. 3.2)."""
    _check(N, R, M)
    z = math.exp(-R * D / M)
    return 1.0 - z / (N * (1.0 - z)) if z < 1 else -math.inf


def min_delay(locality: float, N: int, R: int, M: int) -> float:
    """The paper's bound on D: D >= -(M/R) ln((1-lambda) N / (1 + (1-lambda) N)) (sec. 3.2).

    lambda = 0.95, N = 20, R = 3 gives D >= 0.231 M (23.1 for M = 100).
    """
    _check(N, R, M)
    if not 0 < locality < 1:
        raise InputError(f"locality: lambda must be in (0, 1), got {locality!r}")
    x = (1 - locality) * N
    return -(M / R) * math.log(x / (1 + x))


def min_delay_exact(locality: float, N: int, R: int, M: int, limit: int = 10**6) -> int | None:
    """Smallest whole D with the exact L(D) >= lambda (None if none up to ``limit``)."""
    _check(N, R, M)
    lo, hi = 0, 1
    while delay_locality_exact(hi, N, R, M) < locality:
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if delay_locality_exact(mid, N, R, M) >= locality else (mid, hi)
    return hi if delay_locality_exact(lo, N, R, M) < locality else lo


# -- DDRF, sec. 4.2 -----------------------------------------------------------------------
def level_probabilities(K: int, E1: int, E2: int, R: int, M: int, G: int) -> tuple[float, float, float]:
    """(P_node, P_rack, P_any) of the task launched with K tasks left (module docstring)."""
    if not (0 <= E1 <= E2 and E2 >= 1):
        raise InputError(f"locality: need 0 <= E1 <= E2 and E2 >= 1, got E1={E1}, E2={E2}")
    p = preferred_fraction(K, R, M)
    q = max(0.0, rack_fraction(K, R, M, G) - p)
    a, b = 1.0 - p, 1.0 - p - q
    wait = a**E1
    hit2 = 1.0 - b ** (E2 - E1)
    node_share = p / (p + q) if p + q > 0 else 0.0
    p_node = 1.0 - wait + wait * hit2 * node_share
    p_rack = wait * hit2 * (1.0 - node_share)
    return p_node, p_rack, wait * b ** (E2 - E1)


def ddrf_locality_exact(E1: int, E2: int, N: int, R: int, M: int, G: int, theta: float) -> dict[str, float]:
    """Exact DDRF locality: node, rack, non-local fractions and L = node + theta * rack (<= 1)."""
    _check(N, R, M, G)
    rows = np.array([level_probabilities(K, E1, E2, R, M, G) for K in range(1, N + 1)])
    node, rack, other = rows.mean(axis=0)
    return {"node": float(node), "rack": float(rack), "any": float(other), "L": float(node + theta * rack)}


def ddrf_locality_bound(E1: float, E2: float, N: int, R: int, M: int, theta: float) -> dict[str, float]:
    """The paper's sec. 4.2 formulas as printed: L(E1), L(E2) and L(E) = L(E1) + L(E2) (may exceed 1).

    L(E1) = 1 - (1/N) sum_K e^(-R E1 K / M);
    L(E2) = 1 - (1/N) sum_K e^(-R (E2 - E1) K (E1 + 1) theta / M).
    """
    _check(N, R, M)
    ks = np.arange(1, N + 1)  # R E1 and R (E2 - E1) as floats: any Python ints (not int64's range)
    l1 = 1.0 - float(np.mean(np.exp(-float(R * E1) * ks / M)))
    l2 = 1.0 - float(np.mean(np.exp(-float(R * (E2 - E1)) * ks * (E1 + 1) * theta / M)))
    return {"L_E1": l1, "L_E2": l2, "L": l1 + l2}


def min_e2(
    locality: float, E1: int, N: int, R: int, M: int, G: int, theta: float, *, kind: str, limit: int = 100_000
) -> int | None:
    """Smallest whole E2 >= max(E1, 1) with L(E1, E2) >= lambda, by the paper's bound or exactly."""

    def value(e2: int) -> float:
        if kind == "bound":
            return ddrf_locality_bound(E1, e2, N, R, M, theta)["L"]
        return ddrf_locality_exact(E1, e2, N, R, M, G, theta)["L"]

    lo = max(E1, 1)
    if value(lo) >= locality:
        return lo
    hi, step = lo, 1
    while value(hi) < locality:  # L is nondecreasing in E2 in both forms
        lo, hi, step = hi, hi + step, step * 2
        if hi > limit:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if value(mid) >= locality else (mid, hi)
    return hi


def ddrf_max_wait(E2: float, T: float, L: float, W: float, M: int) -> float:
    """Longest wait before a non-local launch: E2 X, X = (T/S_cpu + T/S_mem)/2 = T E2 (L+W)/(2 W L M) (sec. 4.2)."""
    return T * E2 * (L + W) / (2 * W * L * M)


# -- Monte Carlo ------------------------------------------------------------------------
@dataclass(frozen=True)
class MonteCarloResult:
    """Estimated fractions of launches per level and L, with a 95% confidence half-width for L
    (``None`` for a single trial: one sample gives no interval, and JSON has no infinity)."""

    node: float
    rack: float
    any: float
    L: float
    half_width: float | None
    trials: int


def monte_carlo(
    E1: int,
    E2: int,
    N: int,
    R: int,
    M: int,
    G: int,
    theta: float,
    *,
    trials: int = 2000,
    seed: int = 0,
    redraw: str = "offer",
) -> MonteCarloResult:
    """Simulate the skip rule: per trial and K = N..1, replicas of the K remaining tasks on random
    racks (K distinct racks per replica copy) and a random node in each; slots free on random nodes.

    ``redraw="offer"``: replicas redrawn at every offer (the formulas' independence);
    ``redraw="task"``: drawn once per task. Seeded by ``numpy.random.default_rng(seed)``.
    At most :data:`MC_MAX_DRAWS_PER_K` draws per K and :data:`MC_MAX_DRAWS` in all (memory, time).
    """
    _check(N, R, M, G)
    if M % G:
        raise InputError(f"locality: M={M} must be a multiple of the rack size G={G}")
    racks = M // G
    if N > racks:
        raise InputError(f"locality: Monte Carlo places K <= N={N} copies on distinct racks; needs N <= M/G = {racks}")
    if redraw not in ("offer", "task"):
        raise InputError(f"locality: redraw must be 'offer' or 'task', got {redraw!r}")
    if not (0 <= E1 <= E2 and E2 >= 1):
        raise InputError(f"locality: need 0 <= E1 <= E2 and E2 >= 1, got E1={E1}, E2={E2}")
    if trials < 1:
        raise InputError(f"locality: Monte Carlo needs trials >= 1, got {trials}")
    per_k = trials * E2 * R * racks
    if per_k > MC_MAX_DRAWS_PER_K or N * per_k > MC_MAX_DRAWS:
        raise InputError(
            f"locality: a Monte Carlo of {trials} trials draws trials x E2 x R x M/G = {per_k:.3g} numbers per K, "
            f"{N * per_k:.3g} in all (E2={E2}, R={R}, M/G={racks}, N={N}); at most {MC_MAX_DRAWS_PER_K:.0e} "
            f"and {MC_MAX_DRAWS:.0e}: take fewer trials"
        )
    if isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise InputError(f"locality: the Monte Carlo seed must be an integer in [0, 2^63 - 1], got {seed!r}")
    rng = np.random.default_rng(seed)
    levels = np.zeros((trials, N))  # 1 node, theta rack, 0 any
    counts = np.zeros(3)
    for K in range(1, N + 1):
        shape = (trials, E2 if redraw == "offer" else 1, R)
        chosen = rng.random((*shape, racks)).argsort(axis=-1)[..., :K]  # K distinct racks per copy
        slot = rng.integers(0, G, size=(*shape, K))
        offer_rack = rng.integers(0, racks, size=(trials, E2))
        offer_slot = rng.integers(0, G, size=(trials, E2))
        same_rack = chosen == offer_rack[:, :, None, None]
        node_hit = (same_rack & (slot == offer_slot[:, :, None, None])).any(axis=(2, 3))
        rack_hit = same_rack.any(axis=(2, 3)) & ~node_hit
        t = np.arange(1, E2 + 1)
        accept = node_hit | (rack_hit & (t > E1))
        accept[:, -1] = True
        first = accept.argmax(axis=1)
        rows = np.arange(trials)
        is_node = node_hit[rows, first]
        is_rack = rack_hit[rows, first] & (first + 1 > E1)
        levels[:, K - 1] = np.where(is_node, 1.0, np.where(is_rack, theta, 0.0))
        counts += [is_node.sum(), is_rack.sum(), (~is_node & ~is_rack).sum()]
    per_trial = levels.mean(axis=1)
    half = 1.96 * float(per_trial.std(ddof=1)) / math.sqrt(trials) if trials > 1 else None
    node, rack, other = counts / (trials * N)
    return MonteCarloResult(float(node), float(rack), float(other), float(per_trial.mean()), half, trials)
