"""Timeout handling, Algorithm 2 (AMB sec. 4.3, Examples 4-5)."""

from mropt.admission.timeout import handle_timeout

from paper_table1 import TABLE1, table1


def instance(rows=TABLE1):
    return table1(rows=rows)


def plan(inst, names):
    return [inst.index[n] for n in names]


def names(inst, idx):
    return [inst.ids[i] for i in idx]


def test_example4_and_5_drop_j2():
    inst = instance()
    order = plan(inst, ["j4", "j6", "j2", "j3"])
    dec = handle_timeout(inst, order, inst.index["j4"], map_phase_time=170, now=100)
    assert names(inst, dec.late_before) == ["j2"]  # Example 4: j2 becomes late
    assert names(inst, dec.dropped) == ["j2"]  # Example 5
    assert names(inst, dec.order) == ["j4", "j6", "j3"] and dec.valid
    assert dec.branch == "lines 06-07"


def test_no_timeout_no_drop():
    inst = instance()
    order = plan(inst, ["j4", "j6", "j2", "j3"])
    dec = handle_timeout(inst, order, inst.index["j4"], map_phase_time=150)
    assert dec.dropped == () and dec.valid and dec.branch == "valid"


def test_running_job_with_smallest_benefit_is_dropped():
    rows = dict(TABLE1, j4=(140, 200, 400, 100))  # j4 now the cheapest
    inst = instance(rows)
    order = plan(inst, ["j4", "j6", "j2", "j3"])
    dec = handle_timeout(inst, order, inst.index["j4"], map_phase_time=170, now=100)
    assert names(inst, dec.dropped) == ["j4"] and dec.branch == "lines 02-03"
    # j4's 100 s of maps stay spent; the others still fit
    assert names(inst, dec.order) == ["j6", "j2", "j3"] and dec.valid


def test_accumulating_branch_lines_08_to_11():
    # a running job with a large overrun: no single cheaper job repairs the plan, two together do
    rows = {
        "a": (100, 50, 1000, 1000),  # running
        "b": (100, 50, 420, 10),
        "c": (100, 50, 420, 20),
        "d": (100, 50, 470, 30),
    }
    inst = instance(rows)
    order = plan(inst, ["a", "b", "c", "d"])
    dec = handle_timeout(inst, order, inst.index["a"], map_phase_time=230)
    assert dec.branch == "lines 10-11" and dec.valid
    assert names(inst, dec.dropped) == ["b", "c"]


def test_falls_back_to_the_running_job():
    # the cheaper jobs together are worth more than the running one: drop the running job
    rows = {
        "a": (100, 50, 1000, 25),  # running
        "b": (100, 50, 420, 10),
        "c": (100, 50, 420, 20),
        "d": (100, 50, 470, 30),
    }
    inst = instance(rows)
    order = plan(inst, ["a", "b", "c", "d"])
    dec = handle_timeout(inst, order, inst.index["a"], map_phase_time=230, now=0)
    assert names(inst, dec.dropped) == ["a"] and dec.valid and dec.branch == "running"
