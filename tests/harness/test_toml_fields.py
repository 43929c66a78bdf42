"""One reader of typed TOML keys: experiments, instance sets and solver
profiles give errors of one shape, and non-finite or huge values are refused;
experiment names that would leave results/ are refused."""

from __future__ import annotations

import io
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from mropt.cli.main import main
from mropt.harness import toml_fields as tf
from mropt.harness.experiment import load_experiment
from mropt.harness.profiles import load_profile
from mropt.model.errors import InputError

BLOCK = '[[instances]]\ngenerator = "admission"\nseeds = [1]\nparams = {jobs = 3}\n'


def one_line_error(call, *words: str) -> str:  # noqa: ANN001
    with pytest.raises(InputError) as exc:
        call()
    message = str(exc.value)
    assert "\n" not in message and "Traceback" not in message
    for word in words:
        assert word in message, message
    return message


@pytest.mark.parametrize(
    "text, key, rule",
    [
        ('kill_grace = nan\nmethods = ["edf-greedy"]\n' + BLOCK, "kill_grace", "in [0, 10000000], got nan"),
        ('kill_grace = -1\nmethods = ["edf-greedy"]\n' + BLOCK, "kill_grace", "in [0, 10000000], got -1"),
        ('time_limit = inf\nmethods = ["edf-greedy"]\n' + BLOCK, "time_limit", "in (0, 10000000], got inf"),
        ('time_limit = 1e300\nmethods = ["edf-greedy"]\n' + BLOCK, "time_limit", "got 1e+300"),
        ('time_limit = 0\nmethods = ["edf-greedy"]\n' + BLOCK, "time_limit", "must be a number of seconds"),
        ('time_limit = "10"\nmethods = ["edf-greedy"]\n' + BLOCK, "time_limit", "got '10'"),
        ('methods = [{name = "edf-greedy", time_limit = nan}]\n' + BLOCK, "methods[0].time_limit", "got nan"),
        (
            'method_seeds = [18446744073709551616]\nmethods = ["edf-greedy"]\n' + BLOCK,
            "method_seeds",
            "integers in [0, 2^63 - 1]",
        ),
        ('method_seeds = [-1]\nmethods = ["edf-greedy"]\n' + BLOCK, "method_seeds", "got [-1]"),
        (
            'methods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\nseeds = {count = 1e12}\n',
            "instances[0].seeds.count",
            "must be an integer in [1, 1000000], got 1000000000000.0",
        ),
        (
            'methods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\nseeds = {count = 1000000000000}\n',
            "instances[0].seeds.count",
            "got 1000000000000",
        ),
        (
            'methods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\nseeds = {start = 9223372036854775807, '
            "count = 2}\n",
            "instances[0].seeds.count",
            "must be an integer in [1, 1]",
        ),
        (
            'methods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\nseeds = [1]\n'
            "sweep = {size = {from = 1, step = 1, count = 0}}\n",
            "instances[0].sweep.size.count",
            "got 0",
        ),
        (
            'methods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\nseeds = [1]\n'
            "sweep = {size = {from = nan, step = 1, count = 2}}\n",
            "instances[0].sweep.size.from",
            "got nan",
        ),
        (
            'methods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\nseeds = [1]\nsweep = {size = []}\n',
            "instances[0].sweep.size",
            "must be a non-empty list, got []",
        ),
        (
            'methods = ["edf-greedy"]\n[[instances]]\nfolder = "."\npattern = ""\n',
            "instances[0].pattern",
            "must be a non-empty glob pattern",
        ),
        (
            'methods = ["edf-greedy"]\n[[instances]]\nfolder = "."\npattern = "/etc/*.json"\n',
            "instances[0].pattern",
            "got '/etc/*.json'",
        ),
        (
            'methods = ["edf-greedy"]\n[[instances]]\nfolder = "."\npattern = "../*.json"\n',
            "instances[0].pattern",
            "no '..'",
        ),
        (
            'methods = ["edf-greedy"]\n[[instances]]\ngenerator = "nope"\nseeds = [1]\n',
            "instances[0].generator",
            "must be a known generator (admission, fairness, priority, workload), got 'nope'",
        ),
        ('name = " "\nmethods = ["edf-greedy"]\n' + BLOCK, "name", "must be a non-empty string, got ' '"),
    ],
)
def test_experiment_values_are_one_line_errors(write_experiment, text, key, rule):
    path = write_experiment(text)
    message = one_line_error(lambda: load_experiment(path), str(path), f"key '{key}'", rule)
    assert message.startswith(f"{path}: ")


def test_good_values_still_load(write_experiment):
    exp = load_experiment(
        write_experiment(
            "time_limit = 10_000_000\nkill_grace = 0\nmethod_seeds = {start = 9223372036854775806, count = 2}\n"
            'methods = [{name = "edf-greedy", time_limit = 2}]\n' + BLOCK
        )
    )
    assert exp.time_limit == 1e7 and exp.kill_grace == 0.0 and exp.method_seeds == [2**63 - 2, 2**63 - 1]
    assert exp.methods[0].time_limit == 2.0 and isinstance(exp.methods[0].time_limit, float)


@pytest.mark.parametrize(
    "text, rule",
    [
        ('backend = "cpsat"\nthreads = 0\n', "key 'threads' must be an integer >= 1, got 0"),
        ('backend = "cpsat"\nthreads = 99999999999999999999\n', "key 'threads' must be an integer in [1, 2^63 - 1]"),
        (
            'backend = "cpsat"\ntime_limit = nan\n',
            "key 'time_limit' must be a number of seconds in (0, 10000000] (or \"none\"), got nan",
        ),
        ('backend = "cpsat"\ntime_limit = 1e300\n', "got 1e+300"),
        ('backend = ""\n', "key 'backend' must be a non-empty string, got ''"),
        ("time_limit = 5\n", "key 'backend' is missing"),
        ('backend = "cpsat"\ntheads = 2\n', "unknown key 'theads' (allowed: "),
        ('backend = "cpsat"\nparams = 3\n', "key 'params' must be a table, got 3"),
        ('backend = "cpsat"\n[params]\nbogus = 1\n', "key 'params.bogus' is not a parameter of 'cpsat'"),
    ],
)
def test_profile_errors_have_the_same_shape(tmp_path, text, rule):
    path = tmp_path / "p.toml"
    path.write_text(text)
    message = one_line_error(lambda: load_profile(path), rule)
    assert message.startswith(f"{path}: key ") or message.startswith(f"{path}: unknown key ")


def test_profile_file_errors(tmp_path):
    one_line_error(lambda: load_profile(tmp_path / "none.toml"), "none.toml: no such file")
    bad = tmp_path / "bad.toml"
    bad.write_text("backend = \n")
    one_line_error(lambda: load_profile(bad), f"{bad}: not valid TOML (")


def test_profile_errors_inside_an_experiment_name_both_files(write_experiment, tmp_path):
    prof = tmp_path / "mine.toml"
    prof.write_text('backend = "cpsat"\ntime_limit = inf\n')
    exp = write_experiment(f'profiles = ["{prof}"]\nmethods = ["edf-greedy"]\n' + BLOCK)
    one_line_error(lambda: load_experiment(exp), f"{exp}: key 'profiles[0]': {prof}: key 'time_limit' must be")


def test_the_reader_functions():
    assert tf.number({"x": 3}, "x", "t", above=0) == 3
    with pytest.raises(InputError, match=r"^key 't.x' must be a finite number > 0, got 0$"):
        tf.number({"x": 0}, "x", "t", above=0)
    with pytest.raises(InputError, match=r"^key 'x' must be a finite number in \[0, 1\], got 1.5$"):
        tf.number({"x": 1.5}, "x", "", minimum=0, maximum=1)
    with pytest.raises(InputError, match=r"^key 'x' must be a finite number, got True$"):
        tf.number({"x": True}, "x", "")
    assert tf.integer({}, "n", "", 4) == 4
    with pytest.raises(InputError, match=r"^key 'n' is missing$"):
        tf.integer({}, "n", "")
    with pytest.raises(InputError, match=r"must be an integer in \[-2\^63, 2\^63 - 1\], got 9223372036854775808$"):
        tf.integer({"n": 2**63}, "n", "")
    with pytest.raises(InputError, match=r"^key 'a.b' must be a string, got 1$"):
        tf.string({"b": 1}, "b", "a")
    assert tf.seconds({"t": 5}, "t", "") == 5.0 and tf.seconds({}, "t", "", None) is None
    with pytest.raises(InputError, match=r"^unknown key 'z' \(allowed: a, b\)$"):
        tf.check_keys({"z": 1}, {"a", "b"}, "")
    assert tf.show("x" * 100).endswith("...") and len(tf.show("x" * 100)) == 60


# -- experiment names and the results folder -------------------------------------------
@pytest.mark.parametrize(
    "name", ["/tmp/evil", "../outside", "a/b", "a..b", ".hidden", "..", "sp ace", "tab\tname", "ünï"]
)
def test_unsafe_names_are_refused_without_out(write_experiment, tmp_path, monkeypatch, name):
    escaped = name.replace("\\", "\\\\").replace("\t", "\\t")
    exp = write_experiment(f'name = "{escaped}"\nmethods = ["edf-greedy"]\n' + BLOCK)
    loaded = load_experiment(exp)
    one_line_error(loaded.results_folder, str(exp), "key 'name' must be a folder name", repr(name))
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["gap", str(exp), "--check"]) == 2
    assert err.getvalue().count("\n") == 1 and "key 'name'" in err.getvalue() and "--out" in err.getvalue()
    with redirect_stderr(io.StringIO()):  # with --out the name is only a label
        assert main(["gap", str(exp), "--check", "--out", str(tmp_path / "elsewhere")]) == 0
    assert not (tmp_path / "results").exists()


def test_a_plain_name_gives_results_name(write_experiment):
    exp = load_experiment(write_experiment('name = "amb-paper_v1.2"\nmethods = ["edf-greedy"]\n' + BLOCK))
    assert exp.results_folder() == Path("results") / "amb-paper_v1.2"
    stem = load_experiment(write_experiment('methods = ["edf-greedy"]\n' + BLOCK, name="my-study.toml"))
    assert stem.results_folder() == Path("results") / "my-study"
