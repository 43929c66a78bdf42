"""Hostile files given to ``mropt gap --check``, profiles and instance readers.

``--check`` rejects each with one line (before: a traceback, or "ok"); an input file
that is a folder, a device or too large is refused before it is read.
"""

from __future__ import annotations

import os

import pytest

from mropt.instances.admission_gen import generate_admission
from mropt.instances.fairness_gen import generate_fairness
from mropt.instances.priority_gen import generate_priority
from mropt.model import InputError
from mropt.model.errors import read_input_file

from cli_capture import assert_input_error, assert_promise, run_cli

BLOCK = '[[instances]]\ngenerator = "admission"\nseeds = [1]\nparams = {jobs = 3}\n'
METHODS = 'methods = ["edf-greedy"]\n'


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


@pytest.mark.parametrize(
    "name, data, words",
    [
        ("nonutf.toml", b'name = "\xff\xfe"\n', ["not valid TOML", "UTF-8"]),
        ("binary.toml", bytes(range(256)) * 4, ["not valid TOML"]),
        # nested 5,000 deep: a RecursionError traceback before
        ("deep.toml", "x = " + "[" * 5000 + "]" * 5000 + "\n", ["nested too deeply"]),
        ("deep2.toml", "x = " + "{a=" * 3000 + "1" + "}" * 3000 + "\n", ["nested too deeply"]),
        # a 5,000-digit integer: a ValueError traceback before
        ("bigint.toml", "time_limit = 1" + "0" * 5000 + "\n" + METHODS + BLOCK, ["4300 digits"]),
        ("inf.toml", "time_limit = inf\n" + METHODS + BLOCK, ["key 'time_limit'", "got inf"]),
        ("huge.toml", "time_limit = 1" + "0" * 400 + "\n" + METHODS + BLOCK, ["key 'time_limit'"]),
        # generator parameters of the wrong type: a TypeError traceback before
        ("str.toml", METHODS + BLOCK.replace("jobs = 3", 'jobs = "x"'), ["params.jobs", "an integer"]),
        ("float.toml", METHODS + BLOCK.replace("jobs = 3", "jobs = 2.5"), ["params.jobs"]),
        ("big.toml", METHODS + BLOCK.replace("jobs = 3", "jobs = 100000000000000000000"), ["parameter 'jobs'"]),
        ("many.toml", METHODS + BLOCK.replace("jobs = 3", "jobs = 9000000000"), ["parameter 'jobs'", "1,000,000"]),
        ("mix.toml", METHODS + BLOCK.replace("jobs = 3", 'jobs = 3, mix = {grep = "x"}'), ["params.mix"]),
        ("nan.toml", METHODS + BLOCK.replace("jobs = 3", "jobs = 3, size = nan"), ["params.size"]),
        ("param.toml", 'methods = [{name = "amb", params = {beam = 1' + "0" * 30 + "}}]\n" + BLOCK, ["beam"]),
        ("import.toml", 'imports = ["os.path", "../x"]\n' + METHODS + BLOCK, ["key 'imports[1]'", "module name"]),
    ],
)
def test_check_rejects_hostile_experiment_files_in_one_line(tmp_path, name, data, words):
    result = run_cli("gap", _write(tmp_path, name, data), "--check")
    assert_input_error(result, *words)


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda t: (t / "folder.toml").mkdir() or "folder.toml", ["is a directory"]),
        (lambda t: _write(t, "bin.toml", bytes(range(256)) * 4).name, ["not valid TOML"]),
        (lambda t: _write(t, "deep.toml", "x = " + "[" * 5000 + "]" * 5000).name, ["nested too deeply"]),
        (lambda t: _write(t, "empty.toml", "").name, ["key 'backend' is missing"]),
        (lambda t: "/dev/zero", ["is a device"]),  # read forever before
    ],
)
def test_check_rejects_hostile_profiles_in_one_line(tmp_path, make, words):
    profile = make(tmp_path)
    exp = _write(tmp_path, "exp.toml", f'profiles = ["{profile}"]\n' + METHODS + BLOCK)
    assert_input_error(run_cli("gap", exp, "--check"), "key 'profiles[0]'", *words)
    assert_input_error(run_cli("gap", exp, "--check"), *words)


def test_check_still_says_ok(tmp_path):
    result = run_cli("gap", _write(tmp_path, "exp.toml", METHODS + BLOCK), "--check")
    assert_promise(result)
    assert "ok: 1 instances, 1 methods, 1 runs" in result.out


@pytest.mark.parametrize("path, words", [("/dev/zero", ["is a device"]), ("/dev/urandom", ["is a device"])])
def test_devices_are_not_read_as_instances(path, words):
    assert_input_error(run_cli("solve", path, "--method", "drf"), path, *words)
    assert_input_error(run_cli("import-alibaba", path), *words)
    assert_input_error(run_cli("import-swim", path), *words)


def test_input_files_have_a_size_cap(tmp_path):
    path = _write(tmp_path, "big.json", b" " * 2000)
    with pytest.raises(InputError, match="larger than 1 KiB"):
        read_input_file(path, limit=1024)
    assert read_input_file(path, limit=2000) == b" " * 2000
    with pytest.raises(InputError, match="is a directory"):
        read_input_file(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_pipe_is_still_read(tmp_path):
    """``mropt solve /dev/stdin`` reads a pipe: pipes are not devices."""
    read, write = os.pipe()
    os.write(write, b'{"a": 1}')
    os.close(write)
    try:
        assert read_input_file(f"/proc/self/fd/{read}") == b'{"a": 1}'
    finally:
        os.close(read)


@pytest.mark.parametrize(
    "generate, overrides, words",
    [
        (generate_admission, {"jobs": "30"}, ["parameter 'jobs'", "an integer"]),
        (generate_admission, {"benefit_min": True}, ["parameter 'benefit_min'"]),
        (generate_admission, {"deadline": float("inf")}, ["parameter 'deadline'", "finite"]),
        (generate_fairness, {"users": 2_000_000}, ["parameter 'users'", "1,000,000"]),
        (generate_fairness, {"node_cpu": "16"}, ["parameter 'node_cpu'"]),
        (generate_priority, {"deadlines": (600.0, "x")}, ["parameter 'deadlines'"]),  # a ValueError before
        (generate_priority, {"pattern_mix": {"simple": None}}, ["parameter 'pattern_mix'"]),
    ],
)
def test_generator_parameters_are_typed(generate, overrides, words):
    with pytest.raises(InputError) as info:
        generate(1, **overrides)
    for word in words:
        assert word in str(info.value)
