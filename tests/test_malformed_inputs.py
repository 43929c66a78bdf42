"""The input-error promise over generated hostile files.

README, "Input errors": every command exits 2 with one line on stderr naming the file
and the field, or gives a valid result -- never a traceback, never a warning on stderr,
never a wrong row. Hypothesis generates malformed files of every kind mropt reads and
runs the command in this process (:mod:`cli_capture`):

* instance files of each kind (admission, fairness, priority), a field replaced by a
  hostile value, removed, or an unknown one added -> ``solve`` with a fast method,
  then ``verify`` of what it wrote: exit 2 in one line, or exit 0 twice (a method's
  answer on a file mropt accepted must verify);
* the numbers of valid instances replaced by extreme ones (huge, tiny, subnormal,
  beyond the float range) -> the same;
* solution files, mutated -> ``verify``: exit 2 in one line, or 0, or 1 with every
  problem on its own ``mropt verify:`` line;
* experiment files (TOML) built from hostile pieces -> ``gap --check``: "ok" or one line;
* trace rows (Alibaba CSV, SWIM TSV) -> the importers: bad Alibaba rows are skipped and
  counted (every data line is a row or counted once), or one line.

Examples are bounded (and the same every run, tests/conftest.py): the whole file runs in
well under a minute. Every defect these found has its own test in
``test_input_files.py``, ``test_input_numbers.py``, ``tests/instances/test_importers_hostile.py`` and beside.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mropt
from mropt.instances.fairness_gen import generate_fairness
from mropt.instances.priority_gen import generate_priority
from mropt.sim.policy import policies

from cli_capture import assert_promise, run_cli

SETTINGS = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

BASES = {
    "admission": mropt.generate_admission(seed=1, jobs=4).to_dict(),
    "admission-tasks": {
        "kind": "admission",
        "schema_version": 1,
        "cluster": {"map_slots": 3, "reduce_slots": 2},
        "jobs": [
            {
                "id": "a",
                "map_tasks": 4,
                "reduce_tasks": 2,
                "map_task_time": 5,
                "reduce_task_time": 3,
                "deadline": 60,
                "benefit": 5,
                "submit_time": 1,
            },
            {"id": "b", "map_phase_time": 10, "reduce_phase_time": 4, "deadline": 30, "benefit": 2},
        ],
    },
    "fairness": {
        "kind": "fairness",
        "schema_version": 1,
        "resources": {"cpu": 9, "mem": 18},
        "users": [
            {"id": "A", "demand": {"cpu": 1, "mem": 4}},
            {"id": "B", "demand": {"cpu": 3, "mem": 1}, "weight": 1, "max_tasks": 10},
        ],
    },
    "fairness-nodes": generate_fairness(
        1, users=3, with_nodes=True, replicas=2, tasks_min=1, tasks_max=4, nodes=4
    ).to_dict(),
    "priority": generate_priority(1, arrival_rate=0.0005, map_slots=40, reduce_slots=20).to_dict(),
    "priority-history": generate_priority(
        2, arrival_rate=0.0005, map_slots=30, reduce_slots=30, history_slices=4
    ).to_dict(),
    "workload": {
        "kind": "workload",
        "schema_version": 1,
        "cluster": {"nodes": [{"id": "n", "count": 2, "rack": "r0", "map_slots": 2, "reduce_slots": 1}]},
        "timing": {"straggler_rate": 0.1, "reduce_slowstart": 0.5},
        "faults": [{"node": "n-1", "down": 3, "up": 9}],
        "pools": [{"id": "p", "min_maps": 1, "weight": 2}],
        "jobs": [
            {
                "id": "a",
                "pool": "p",
                "deadline": 90,
                "benefit": 5,
                "stages": [
                    {"type": "map", "tasks": [{"duration": 4, "count": 3, "replicas": ["n-0"]}]},
                    {"type": "reduce", "tasks": [{"duration": 2}]},
                ],
            },
            {"id": "b", "submit_time": 1, "stages": [{"type": "map", "tasks": [{"duration": 5}]}]},
        ],
    },
}
#: per kind, what runs on a mutated file, read from the registries: every method that is not exact
#: (exact methods have their own hostile tests), every policy that needs no plan (simulated)
METHODS = {
    **{kind: [m.name for m in mropt.methods(kind) if not m.exact] for kind in ("admission", "fairness", "priority")},
    "workload": [name for name, info in policies().items() if not info.needs_plan],
}

#: JSON texts of hostile values (numbers past the float range, lone surrogates, deep nesting...)
HOSTILE = [
    "1" + "0" * 400,
    "-" + "1" * 320,
    "1" + "0" * 5000,
    "1e309",
    "-1e309",
    "1e400",
    "1.7976931348623157e308",
    "1e200",
    "1e101",
    "5e-324",
    "1e-310",
    "1e-200",
    "-0.0",
    "0",
    "-1",
    "2.5",
    "9223372036854775808",
    "18446744073709551616",
    "4.611686018427388e18",
    "NaN",
    "Infinity",
    '"\\ud800"',
    '"\\udfff x"',
    '""',
    '"x"',
    '"1"',
    "[]",
    "{}",
    "true",
    "false",
    "null",
    "[1e309]",
    '{"a": 1e999}',
    "[" * 3000 + "]" * 3000,
    '{"id": "\\ud800"}',
]
KEYS = [
    "x",
    "id",
    "kind",
    "weight",
    "max_tasks",
    "nodes",
    "task_inputs",
    "history",
    "routing",
    "submit_time",
    "\\ud800",
    "deadline",
    "resources",
    "capacity",
    "rack",
    "pattern_mix",
    "iterations",
    "jobs",
]


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


def _mutated(base: dict, data, values: st.SearchStrategy[str]) -> str:
    """``base`` as JSON text with 1-3 fields replaced by a value (text), removed, or an unknown one added."""
    doc = copy.deepcopy(base)
    literals: list[str] = []
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        paths = [p for p in _paths(doc) if p]
        path = data.draw(st.sampled_from(paths), label="path")
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        action = data.draw(st.sampled_from(["set", "set", "delete", "add"]), label="action")
        if action == "delete":
            del parent[path[-1]]
            continue
        literals.append(data.draw(values, label="value"))
        tag = f"@@{len(literals) - 1}@@"
        if action == "add" and isinstance(parent, dict):
            parent[data.draw(st.sampled_from(KEYS), label="key")] = tag
        else:
            parent[path[-1]] = tag
    text = json.dumps(doc)
    for k, literal in enumerate(literals):
        text = text.replace(f'"@@{k}@@"', literal)
    return text


def _solve_and_verify(text: str, method: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        inst, sol = Path(tmp) / "i.json", Path(tmp) / "s.json"
        inst.write_text(text, encoding="utf-8")
        if method in METHODS["workload"]:  # a workload: simulated under a policy
            assert_promise(run_cli("simulate", inst, "--policy", method, "--json"))
            return
        solved = run_cli("solve", inst, "--method", method, "--time-limit", "5", "--json", "-o", sol)
        assert_promise(solved)
        if solved.code == 0:
            verified = run_cli("verify", inst, sol)
            assert_promise(verified)
            assert verified.code == 0, (method, verified.err)


@settings(max_examples=90, **SETTINGS)
@given(st.data())
def test_malformed_instance_files(data):
    name = data.draw(st.sampled_from(sorted(BASES)), label="base")
    text = _mutated(BASES[name], data, st.sampled_from(HOSTILE))
    _solve_and_verify(text, data.draw(st.sampled_from(METHODS[name.split("-")[0]]), label="method"))


#: numbers as JSON text: extreme magnitudes, integers past 64 bits and past the float range
NUMBERS = st.one_of(
    st.sampled_from(
        [
            "0",
            "1",
            "-1",
            "0.5",
            "1e-100",
            "1e100",
            "1e-101",
            "1e101",
            "5e-324",
            "1e308",
            "1.7976931348623157e308",
            "1e309",
            "9223372036854775807",
            "9223372036854775808",
        ]
    ),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(1, 9), st.integers(-330, 330)),
    st.integers(-(10**25), 10**25).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)


@settings(max_examples=90, **SETTINGS)
@given(st.data())
def test_extreme_numbers_in_valid_instances(data):
    name = data.draw(st.sampled_from(sorted(BASES)), label="base")
    doc = copy.deepcopy(BASES[name])
    numeric = [p for p in _paths(doc) if p and p[-1] != "schema_version" and _is_number(_get(doc, p))]
    literals = []
    for _ in range(data.draw(st.integers(1, 3), label="numbers")):
        path = data.draw(st.sampled_from(numeric), label="path")
        _get(doc, path[:-1])[path[-1]] = f"@@{len(literals)}@@"
        literals.append(data.draw(NUMBERS, label="number"))
    text = json.dumps(doc)
    for k, literal in enumerate(literals):
        text = text.replace(f'"@@{k}@@"', literal)
    _solve_and_verify(text, data.draw(st.sampled_from(METHODS[name.split("-")[0]]), label="method"))


def _get(doc, path):
    for key in path:
        doc = doc[key]
    return doc


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _solution(name: str, method: str) -> dict:
    inst = mropt.model.io.instance_from_dict(BASES[name])
    return mropt.solve(inst, method).to_dict()


SOLUTIONS = {name: _solution(name, METHODS[name.split("-")[0]][0]) for name in BASES if name != "workload"}


@settings(max_examples=90, **SETTINGS)
@given(st.data())
def test_malformed_solution_files(data):
    name = data.draw(st.sampled_from(sorted(SOLUTIONS)), label="base")
    text = _mutated(SOLUTIONS[name], data, st.sampled_from(HOSTILE) | NUMBERS)
    with tempfile.TemporaryDirectory() as tmp:
        inst, sol = Path(tmp) / "i.json", Path(tmp) / "s.json"
        inst.write_text(json.dumps(BASES[name]), encoding="utf-8")
        sol.write_text(text, encoding="utf-8")
        result = run_cli("verify", inst, sol)
        assert_promise(result, ok_codes=(0, 1))
        if result.code == 1:
            assert result.err_lines and all(line.startswith("mropt verify: ") for line in result.err_lines)


#: pieces of experiment files: good keys with bad values, bad keys, broken syntax, bytes
TOML_VALUES = [
    "3",
    "-1",
    "0",
    "2.5",
    "1e309",
    "inf",
    "nan",
    "1" + "0" * 30,
    "1" + "0" * 5000,
    '"x"',
    '""',
    "[]",
    "{}",
    "true",
    '["edf-greedy"]',
    '["no-such"]',
    '[{name = "amb", params = {beam = 1e9}}]',
    "{start = 1, count = 3}",
    "{start = -1, count = 0}",
    "[" * 800 + "]" * 800,
    '"\\u00e9"',
    '["os", "../x", "a b"]',
    '["cpsat", "/dev/zero", "solvers"]',
]
TOML_KEYS = [
    "name",
    "description",
    "imports",
    "time_limit",
    "kill_grace",
    "method_seeds",
    "profiles",
    "methods",
    "report",
    "bogus",
]
BLOCK_LINES = [
    'generator = "admission"',
    'generator = "nope"',
    "seeds = [1]",
    "seeds = [1, 2]",
    'seeds = "1"',
    "params = {jobs = 3}",
    'params = {jobs = "x"}',
    "params = {jobs = 2.5}",
    "params = {size = nan}",
    "params = {mix = {grep = -1}}",
    "sweep = {jobs = [2, 3]}",
    "sweep = {jobs = {from = 1, step = 1e308, count = 3}}",
    'folder = "nowhere"',
    'set = "nope"',
    'importer = "swim"',
    'trace = "/dev/zero"',
    "group = 3",
    "bogus = 1",
]


@settings(max_examples=80, **SETTINGS)
@given(st.data())
def test_malformed_experiment_files_under_check(data):
    lines = ['methods = ["edf-greedy"]'] if data.draw(st.booleans(), label="methods") else []
    for key in data.draw(st.lists(st.sampled_from(TOML_KEYS), max_size=4, unique=True), label="keys"):
        lines.append(f"{key} = {data.draw(st.sampled_from(TOML_VALUES), label=key)}")
    for _ in range(data.draw(st.integers(0, 2), label="blocks")):
        lines.append("[[instances]]")
        lines += data.draw(st.lists(st.sampled_from(BLOCK_LINES), max_size=4, unique=True), label="block")
    raw = "\n".join(lines).encode() + b"\n"
    raw += data.draw(
        st.sampled_from([b"", b"\xff\xfe", b"x = [", b"\x00", b"[[instances]]\n", b"a.b.c = 1\n"]), label="tail"
    )
    with tempfile.TemporaryDirectory() as tmp:
        exp = Path(tmp) / "exp.toml"
        exp.write_bytes(raw)
        result = run_cli("gap", exp, "--check")
        assert_promise(result)
        if result.code == 0:
            assert ": ok: " in result.out


#: characters of hostile CSV and TSV fields
FIELD = st.text(alphabet="0123456789-.e,\t\"' xinfa\x00é", max_size=12) | st.sampled_from(
    ["inf", "nan", "-inf", "1e400", "1" + "0" * 5000, "9" * 25, "", " ", '"', "1e12", "0.001", "-5"]
)
GOOD_ROW = "10,20,1,1,4,Terminated,50,0.01"


@settings(max_examples=60, **SETTINGS)
@given(st.lists(st.lists(FIELD, min_size=0, max_size=9).map(",".join), max_size=8))
def test_alibaba_rows_are_skipped_and_counted(rows):
    lines = [GOOD_ROW, *rows]
    with tempfile.TemporaryDirectory() as tmp:
        trace, out = Path(tmp) / "t.csv", Path(tmp) / "a.json"
        trace.write_text("create,end,job,task,instances,status,cpu,mem\n" + "\n".join(lines) + "\n", encoding="utf-8")
        result = run_cli("import-alibaba", trace, "--machines", "2", "--duration", "1e9", "-o", out)
        assert_promise(result)
        if result.code == 0:
            source = json.loads(out.read_text())["source"]
            data_lines = sum(1 for line in "\n".join(lines).splitlines() if line.strip())
            assert source["rows_usable"] + sum(source["skipped"].values()) == data_lines


@settings(max_examples=60, **SETTINGS)
@given(
    st.lists(st.lists(FIELD, min_size=1, max_size=7).map("\t".join), min_size=1, max_size=6),
    st.sampled_from([[], ["--benefit-exponent", "4"], ["--map-rate", "1e-6"], ["--partition-size", "1"]]),
)
def test_swim_rows_are_one_line_errors_or_an_instance(rows, options):
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "t.tsv"
        trace.write_text("a\t0\t0\t1\t1\t1\n" + "\n".join(rows) + "\n", encoding="utf-8")
        result = run_cli("import-swim", trace, *options, "-o", Path(tmp) / "s.json")
        assert_promise(result)
