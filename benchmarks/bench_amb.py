"""Performance of AMB (AMB paper sec. 4.2), SEQ evaluation and the incremental insertion test.

Run: ``.venv/bin/python benchmarks/bench_amb.py [--sizes 30 300 3000] [--seed 0]``

For N paper-default jobs (``generate_admission(seed, jobs=N)``) it prints, measured in one run:

* AMB: run time of ``amb_static`` with a beam (``--beam``, default 16: the method
  ``amb-beam16``, not ``amb``, which keeps every valid order), against the same algorithm
  whose insertion tests re-evaluate every candidate order from scratch (seq.evaluate).
  ``amb`` itself keeps phi implicitly and is timed by the gap studies (benchmarks/RESULTS.md);
* SEQ: cost per call of ``seq.evaluate`` on an order of all N jobs, against the
  paper's literal O(n^2) occupied-interval procedure (written here);
* insertion: cost per call of ``InsertionOracle.can_insert`` on a valid order of N jobs
  (the N jobs in deadline order, deadlines relaxed to at least their completion time
  plus U[0, 300] s so the order is valid), against a full ``seq.evaluate`` of the order
  with the job inserted; the one-off preparation of the order is shown separately and
  as amortised over testing all N+1 positions of one job.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mropt.admission.amb import DEFAULT_BEAM, amb_static
from mropt.admission.insertion import InsertionOracle
from mropt.admission.scoring import score_order
from mropt.admission.seq import evaluate
from mropt.admission.verify import literal_reduce_completion_times
from mropt.instances.admission_gen import generate_admission


def naive_seq(tcm, tcr, deadlines, order):
    """AMB sec. 4.1 literally: prefix sums, then jobs in deadline order fill the earliest free time."""
    cotm = np.cumsum(tcm[order])
    return cotm, literal_reduce_completion_times(cotm, tcr[order], deadlines[order])


def amb_full_reeval(inst, beam):
    """Algorithm 1 with the same pruning and beam, each test a full SEQ evaluation."""
    from mropt.admission.amb import order_key

    tcm, tcr, dl, rel = inst.tcm, inst.tcr, inst.deadlines, inst.submit_times
    phi = [np.empty(0, dtype=np.intp)]
    accepted = []
    for x in score_order(inst):
        new = []
        for s in phi:
            oracle = InsertionOracle(tcm, tcr, dl, s, rel)  # only for Theorems 3-4
            a, b = oracle.theorem_range(int(x))
            for p in range(a, b + 1):
                cand = np.insert(s, p, x)
                if evaluate(tcm, tcr, dl, cand, rel).valid:
                    new.append(cand)
        if new:
            accepted.append(int(x))
            if beam and len(new) > beam:
                new = sorted(new, key=lambda o: order_key(inst, o, rel))[:beam]
            phi = new
    return accepted


def per_call(fn, min_time=0.3, max_calls=10_000):
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time or calls >= max_calls:
            return elapsed / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[30, 300, 3000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--beam", type=int, default=DEFAULT_BEAM)
    args = ap.parse_args()
    rows = []
    for n in args.sizes:
        inst = generate_admission(args.seed, jobs=n)
        t0 = time.perf_counter()
        res = amb_static(inst, beam=args.beam)
        t_amb = time.perf_counter() - t0
        t0 = time.perf_counter()
        acc_ref = amb_full_reeval(inst, args.beam)
        t_amb_ref = time.perf_counter() - t0
        assert acc_ref == res.accepted, "reference AMB disagrees"

        tcm, tcr, dl = inst.tcm, inst.tcr, np.array(inst.deadlines)
        order = np.argsort(dl, kind="stable")
        t_seq = per_call(lambda: evaluate(tcm, tcr, dl, order), max_calls=2000)
        t_naive = per_call(lambda: naive_seq(tcm, tcr, dl, order), min_time=0.5, max_calls=50)

        # a valid order of all n jobs, plus 20 extra jobs to insert
        big = generate_admission(args.seed + 1, jobs=n + 20)
        btcm, btcr, bd = big.tcm, big.tcr, np.array(big.deadlines)
        rng = np.random.default_rng(args.seed)
        base = np.argsort(bd[:n], kind="stable")
        s = evaluate(btcm, btcr, bd, base)
        bd[base] = np.maximum(bd[base], s.cotr + rng.uniform(0, 300, n))
        horizon = float(s.cotr.max())
        bd[n:] = rng.uniform(0.3, 1.1, 20) * horizon
        assert evaluate(btcm, btcr, bd, base).valid
        t0 = time.perf_counter()
        oracle = InsertionOracle(btcm, btcr, bd, base)
        t_prep = time.perf_counter() - t0
        tests = [(n + int(rng.integers(20)), int(rng.integers(n + 1))) for _ in range(200)]
        agree = all(
            oracle.can_insert(x, p) == evaluate(btcm, btcr, bd, np.insert(base, p, x)).valid for x, p in tests[:20]
        )
        assert agree, "incremental test disagrees with full evaluation"
        it = iter(range(10**9))
        t_inc = per_call(lambda: oracle.can_insert(*tests[next(it) % len(tests)]), max_calls=20000)
        it2 = iter(range(10**9))

        def full_test():
            x, p = tests[next(it2) % len(tests)]
            return evaluate(btcm, btcr, bd, np.insert(base, p, x)).valid

        t_full = per_call(full_test, max_calls=2000)
        t_amort = t_inc + t_prep / (n + 1)
        rows.append(
            (n, len(res.accepted), t_amb, t_amb_ref, t_seq, t_naive, t_prep, t_inc, t_full, t_amort, res.beam_cut)
        )

    print(
        f"AMB benchmark (seed {args.seed}; AMB with beam {args.beam}, the method amb-beam{args.beam}); "
        "times in seconds unless marked; ratio = reference / ours"
    )
    head = (
        f"{'N':>5} {'acc':>4} | {'AMB s':>8} {'AMB full-reeval s':>17} {'ratio':>6} | "
        f"{'SEQ us/call':>11} {'naive O(n^2) us':>15} {'ratio':>7} | "
        f"{'prep ms':>8} {'insert us':>9} {'full us':>9} {'ratio':>6} {'amortised ratio':>15}"
    )
    print(head)
    print("-" * len(head))
    for n, acc, ta, tr, ts, tn, tp, ti, tf, tam, _cut in rows:
        print(
            f"{n:>5} {acc:>4} | {ta:>8.3f} {tr:>17.3f} {tr / ta:>6.1f} | "
            f"{ts * 1e6:>11.1f} {tn * 1e6:>15.1f} {tn / ts:>7.1f} | "
            f"{tp * 1e3:>8.2f} {ti * 1e6:>9.1f} {tf * 1e6:>9.1f} {tf / ti:>6.1f} {tf / tam:>15.1f}"
        )


if __name__ == "__main__":
    main()
