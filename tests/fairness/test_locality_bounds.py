"""``mropt locality`` with extreme integers: one line and exit 2, quickly, never a traceback."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mropt.fairness import flow
from mropt.fairness.flow import MAX_ROUND_SLOTS, round_from_instance
from mropt.fairness.locality import MAX_TASKS, ddrf_locality_bound, monte_carlo
from mropt.instances.fairness_gen import generate_fairness
from mropt.model import InputError, save_instance

from cli_capture import assert_input_error, run_cli

BIG = str(2**70)


def no_draws(*args: object, **kwargs: object) -> None:
    raise AssertionError("the Monte Carlo drew")


def no_round(*args: object, **kwargs: object) -> None:
    raise AssertionError("the round's offers were listed")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("ddrf", "--monte-carlo=-1"), ("argument --monte-carlo", "[0, 10,000,000]", "-1")),  # numpy's ValueError
        (("ddrf", "--monte-carlo", BIG), ("argument --monte-carlo", BIG)),  # numpy's ValueError
        (("ddrf", "--monte-carlo", "10000000"), ("Monte Carlo", "take fewer trials")),  # 10^7 x 1200 draws per K
        (("ddrf", "--seed=-1", "--monte-carlo", "10"), ("argument --seed", "[0, 2^63 - 1]")),
        (("ddrf", "--tasks", BIG), ("argument --tasks", "100,000")),
        (("ddrf", "--e1", "2,x"), ("argument --e1", "'x'")),
        (("ddrf", "--e1=-1"), ("argument --e1", "[0, 2^63 - 1]")),
        (("delay-bound", "--tasks", str(MAX_TASKS + 1)), ("argument --tasks",)),
        (("delay-bound", "--slots-per-node", "0"), ("argument --slots-per-node", "[1, 2^63 - 1]")),
        (("delay-bound", "--nodes", BIG), ("argument --nodes",)),
    ],
)
def test_out_of_range_integers_are_one_line(argv, words, monkeypatch):
    monkeypatch.setattr(np.random, "default_rng", no_draws)  # refused before the Monte Carlo draws
    assert_input_error(run_cli("locality", *argv), *words)


def test_64_bit_delays_and_replicas_are_computed_not_overflowed():
    """R E1 beyond int64 overflowed numpy's integers (OverflowError) in the paper's bound."""
    top = 2**63 - 1
    result = run_cli("locality", "ddrf", "--e1", str(top), "--e2", str(top), "--replicas", str(top), "--json")
    assert result.code == 0, result.err
    bound = ddrf_locality_bound(top, top, 20, top, 100, 0.05)
    assert bound == {"L_E1": 1.0, "L_E2": 0.0, "L": 1.0}  # every offer local: e^(-huge) = 0; E2 - E1 = 0


def test_monte_carlo_refuses_before_drawing():
    with pytest.raises(InputError, match="trials >= 1"):
        monte_carlo(2, 10, 20, 3, 100, 5, 0.05, trials=0)
    with pytest.raises(InputError, match="take fewer trials"):
        monte_carlo(2, 10, 20, 3, 100, 5, 0.05, trials=2**40)
    with pytest.raises(InputError, match="seed"):
        monte_carlo(2, 10, 20, 3, 100, 5, 0.05, trials=10, seed=-1)


def test_one_trial_has_no_interval_and_the_json_stays_strict():
    """One trial gives no sample deviation: ``--json`` wrote ``Infinity`` (not JSON) as its half-width."""
    result = run_cli("locality", "ddrf", "--e1", "2", "--e2", "10", "--monte-carlo", "1", "--json")
    assert result.code == 0, result.err

    def refuse(name: str) -> float:
        raise AssertionError(f"non-JSON constant {name} in {result.out}")

    (row,) = json.loads(result.out, parse_constant=refuse)["rows"]
    assert row["mc_half_width"] is None and 0 <= row["mc_L"] <= 1
    assert monte_carlo(2, 10, 20, 3, 100, 5, 0.05, trials=2).half_width is not None


@pytest.fixture
def placed(tmp_path):
    instance = generate_fairness(1, users=4, with_nodes=True, replicas=2, tasks_max=6)
    path = tmp_path / "drf.json"
    save_instance(instance, path)
    return instance, path


@pytest.mark.parametrize("slots", [BIG, str(2**62), str(MAX_ROUND_SLOTS)])
def test_a_round_of_too_many_slots_is_refused_at_once(placed, slots, monkeypatch):
    """``locality round --slots-per-node 2**70`` listed 2^70 offers: it ran past 60 s."""
    _, path = placed
    monkeypatch.setattr(flow, "SchedulingRound", no_round)  # refused before the round is built
    words = ("argument --slots-per-node",) if slots == BIG else ("free slots in all", f"{int(slots):,} per node")
    assert_input_error(run_cli("locality", "round", path, "--slots-per-node", slots), *words)


def test_a_round_of_many_slots_from_tiny_tasks_is_refused(placed):
    """By default a node's slots are the largest tasks that fit: huge nodes made a huge round too."""
    instance = generate_fairness(1, users=4, with_nodes=True, replicas=2, tasks_max=6, node_cpu=1e90, node_mem=1e90)
    with pytest.raises(InputError, match=r"free slots in all \(the largest tasks that fit, on 10 nodes\)"):
        round_from_instance(instance)
    small, _ = placed
    rnd = round_from_instance(small, 2)  # a round within the cap: 2 slots on each of the 10 nodes
    assert sum(rnd.slots.values()) == 2 * len(small.nodes)
