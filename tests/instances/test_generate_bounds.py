"""``mropt generate`` with extreme numbers: a file the readers accept, or one line and exit 2.

Every numeric option of the four generators (the int and float fields of their parameter
dataclasses, and ``--seed``) is given values at the edges: negative, 0, a subnormal
(``1e-320``), beyond 64 bits (``2**70``), infinite, NaN, beside ordinary values. The command either exits 0 having
written a file that ``load_instance`` reads (and, for a workload, that ``mropt simulate`` runs),
or exits 2 with one ``mropt: error:`` line; never a traceback or a warning.
"""

from __future__ import annotations

import typing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mropt.cli.common import param_fields
from mropt.instances.admission_gen import AdmissionParams, JobType, generate_admission
from mropt.instances.fairness_gen import FairnessParams, generate_fairness
from mropt.instances.priority_gen import PriorityParams, generate_priority
from mropt.instances.workload_gen import PRESETS, WorkloadParams, generate_workload
from mropt.model import InputError, load_instance

from cli_capture import assert_input_error, assert_promise, run_cli


def numeric_flags(cls: type) -> list[str]:
    """``--seed`` and the options of the int and float fields of ``cls`` (as ``add_param_options`` builds them)."""
    hints = typing.get_type_hints(cls)
    return ["--seed"] + ["--" + f.name.replace("_", "-") for f in param_fields(cls) if hints[f.name] in (int, float)]


#: the generate commands, with options that keep their instances small (an option drawn later overrides)
KINDS: dict[tuple[str, ...], tuple[tuple[str, ...], list[str]]] = {
    ("admission",): (("-n", "3"), numeric_flags(AdmissionParams)),
    ("fairness",): (("-n", "3"), numeric_flags(FairnessParams)),
    ("priority",): ((), numeric_flags(PriorityParams)),
    **{("workload", "--preset", p): (("--jobs", "2"), numeric_flags(WorkloadParams)) for p in PRESETS},
}
EXTREMES = ("-1", "0", "1e-320", "5e-324", "1e300", str(2**70), str(-(2**70)), str(2**63 - 1), "inf", "-inf", "nan")
#: ordinary values beside them, so that files are written too (none makes a big instance)
ORDINARY = ("1", "2", "3", "0.25", "0.5", "0.9", "10", "100", "1e-100")


@st.composite
def generate_argv(draw: st.DrawFn) -> tuple[tuple[str, ...], list[str]]:
    kind = draw(st.sampled_from(sorted(KINDS)))
    base, flags = KINDS[kind]
    chosen = draw(st.lists(st.sampled_from(flags), min_size=1, max_size=3, unique=True))
    values = [draw(st.sampled_from(EXTREMES + ORDINARY)) for _ in chosen]
    return kind, [*base, *(f"{flag}={value}" for flag, value in zip(chosen, values, strict=True))]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=generate_argv())
def test_extreme_numbers_write_a_readable_file_or_one_line(case, tmp_path):
    kind, options = case
    out = tmp_path / "x.json"
    out.unlink(missing_ok=True)
    result = run_cli("generate", *kind, *options, "-o", out)
    assert_promise(result)
    if result.code == 0:
        load_instance(out)  # what every reader of the kind accepts
        if kind[0] == "workload":
            # drf runs on slots and on resource vectors alike (its needs are none; fifo needs slots)
            assert_promise(ran := run_cli("simulate", out, "--policy", "drf"))
            assert ran.code == 0, (kind, options, ran.err)
    else:
        assert not out.exists()


# -- the cases found, one by one ----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["admission", "fairness", "priority", "workload"])
def test_a_negative_or_huge_seed_is_one_line(kind):
    """``--seed -1`` was numpy's ValueError traceback (admission, fairness, priority)."""
    for seed in ("-1", str(2**63)):
        assert_input_error(run_cli("generate", kind, f"--seed={seed}"), "argument --seed", "[0, 2^63 - 1]", seed)
    small = () if kind == "priority" else ("--jobs" if kind != "fairness" else "--users", "2")
    assert run_cli("generate", kind, "--seed", str(2**63 - 1), *small).code == 0


@pytest.mark.parametrize("generate", [generate_admission, generate_fairness, generate_priority])
def test_the_generators_refuse_a_negative_seed(generate):
    with pytest.raises(InputError, match=r"parameter 'seed' must be an integer in \[0, 2\^63 - 1\], got -1"):
        generate(-1)


def test_a_subnormal_map_task_time_is_refused_not_written(tmp_path):
    """``--map-task-time 1e-320`` wrote a task time that ``mropt simulate`` refused."""
    out = tmp_path / "w.json"
    line = assert_input_error(
        run_cli("generate", "workload", "--preset", "mpsa", "--map-task-time", "1e-320", "-o", out),
        "'map_task_time'",
        "1e-320",
    )
    assert "[1e-100, 1e100]" in line and not out.exists()
    with pytest.raises(InputError, match="'reduce_work'.*reduce task time"):  # a number it makes, not writes
        generate_workload("mpsa", 0, reduce_work=1e-97, reduce_tasks=100_000)
    for name, value in (("straggler_rate", 1e-320), ("slow_speed", 1e-320), ("alpha", 5e-324)):
        with pytest.raises(InputError, match=f"'{name}'"):
            generate_workload("late", 0, **{name: value})
    # the smallest accepted values are written and read back
    w = generate_workload("mpsa", 0, jobs=2, map_task_time=1e-100)
    assert load_instance_text(w).jobs[0].stages[0].tasks[0].duration == 1e-100


def load_instance_text(instance):
    from mropt.model.io import instance_from_dict, instance_to_json, parse_json

    return instance_from_dict(parse_json(instance_to_json(instance)))


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("admission", "--size", str(2**70)), ("'size'", "(0, 1e+09]")),  # numpy's int64 bound, a traceback
        (("admission", "--size", "1e300"), ("'size'",)),
        (("admission", "--mean-interarrival", "1e300"), ("'mean_interarrival'",)),
        (("workload", "--preset", "ddrf", "--load", "1e-320"), ("'load'", "mean gap")),  # OverflowError
        (("workload", "--preset", "mpsa", "--arrival-rate", "1e-320"), ("'arrival_rate'",)),  # inf in the JSON
        (("workload", "--mix", "wordcount=1e308,grep=1e308"), ("'mix'",)),  # weights summing to inf
        (("admission", "--jobs", str(2**70)), ("argument --jobs", "2^63 - 1")),
    ],
)
def test_numbers_that_were_tracebacks_are_one_line(argv, words):
    assert_input_error(run_cli("generate", *argv), *words)


def test_tiny_job_type_times_are_clamped_to_the_tenth_of_a_second(tmp_path):
    """An admission job type of 0.01 s rounded to a task time of 0.0, which the reader refuses."""
    inst = generate_admission(0, jobs=3, mix={"grep": 1}, job_types={"grep": JobType(0.01, 0, 0.01)})
    assert {j.map_task_time for j in inst.jobs} == {0.1} and {j.reduce_task_time for j in inst.jobs} == {0.1}
    load_instance_text(inst)


def test_usage_errors_are_one_line():
    """argparse's errors are one ``mropt: error:`` line too, naming the command and the option."""
    assert_input_error(run_cli("generate", "admission", "--seed", "x"), "generate admission: argument --seed", "'x'")
    assert_input_error(run_cli("generate", "nope"), "invalid choice: 'nope'")
    assert_input_error(run_cli(), "required: COMMAND")
