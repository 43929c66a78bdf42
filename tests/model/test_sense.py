"""Every instance kind declares its objective sense where generic code reads it."""

from __future__ import annotations

import math

import pytest

from mropt.model.errors import InputError
from mropt.model.io import INSTANCE_KINDS, objective_sense
from mropt.model.sense import MAXIMISE, MINIMISE, SENSES, better, beyond, shortfall, tighter


def test_every_kind_declares_its_sense():
    assert {k: cls.SENSE for k, cls in INSTANCE_KINDS.items()} == {
        "admission": MAXIMISE,
        "fairness": MAXIMISE,
        "priority": MINIMISE,
        "workload": MAXIMISE,  # a simulation's objective: the benefit earned (AMB eq. 1)
    }
    assert all(objective_sense(k) in SENSES for k in INSTANCE_KINDS)
    assert objective_sense(None) == MAXIMISE  # rows stored before the kind column: admission
    with pytest.raises(InputError, match="unknown instance kind 'nope'"):
        objective_sense("nope")


@pytest.mark.parametrize("sense, good, bad", [(MAXIMISE, 10.0, 8.0), (MINIMISE, 8.0, 10.0)])
def test_better_worse_and_gaps_in_both_senses(sense, good, bad):
    assert better(sense, good, bad) and not better(sense, bad, good)
    assert not better(sense, good, good * (1 + 1e-12))  # within the objective tolerance: equal
    assert shortfall(sense, bad, good) == pytest.approx(2.0 / good)
    assert shortfall(sense, good, bad) == 0.0  # better than the reference: clamped, not negative
    outside = 12.0 if sense == MAXIMISE else 6.0  # a valid bound: above a maximum, below a minimum
    assert beyond(sense, outside, good) == pytest.approx(abs(outside - good) / good)
    assert beyond(sense, bad, good) == 0.0  # on the wrong side of a verified value: 0, never negative
    # a bound tightens towards the optimum: down when maximising, up when minimising
    assert tighter(sense, 11.0, 12.0) == (sense == MAXIMISE)
    for noisy in (good * (1 + 1e-15), good * (1 - 1e-15), 0.1 + 0.2):
        g = shortfall(sense, noisy, good if noisy != 0.1 + 0.2 else 0.3)
        assert g == 0.0 and math.copysign(1.0, g) == 1.0
