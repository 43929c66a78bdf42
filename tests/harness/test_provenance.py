"""The study record: the experiment's text, versions and machine in DIR/study/."""

from __future__ import annotations

import os
import platform
import socket
from types import SimpleNamespace

from mropt.harness.provenance import read_studies, record_study, versions


def test_record_appends_a_session_per_start_and_keeps_the_text(tmp_path):
    path = tmp_path / "exp.toml"
    path.write_text('name = "x"\nmethods = ["amb"]\n')
    exp = SimpleNamespace(name="x", path=path, profiles={})
    record_study(exp, tmp_path / "res")
    path.write_text('name = "x"\nmethods = ["amb", "edf-greedy"]\n')  # edited, then resumed
    record_study(exp, tmp_path / "res")
    (rec,) = read_studies(tmp_path / "res")
    assert rec.name == "x" and rec.text == path.read_text() and rec.path == str(path.resolve())
    assert len(rec.sessions) == 2
    s = rec.sessions[-1]
    assert s["host"] == socket.gethostname() and s["platform"] == platform.platform()
    assert s["cpus_machine"] == os.cpu_count() and 1 <= s["cpus"] <= os.cpu_count()
    assert set(s["versions"]) == {"mropt", "numpy", "ortools", "highspy", "pulp", "python"}
    assert s["versions"]["python"] == platform.python_version()


def test_any_experiment_name_gets_a_file(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text("")
    for name in ("../../etc/x", "a b", ".hidden"):
        record_study(SimpleNamespace(name=name, path=path, profiles={}), tmp_path / "res")
    assert sorted(r.name for r in read_studies(tmp_path / "res")) == sorted(["../../etc/x", "a b", ".hidden"])
    assert all(p.parent == tmp_path / "res" / "study" for p in (tmp_path / "res").rglob("*.json"))


def test_versions_name_every_package():
    v = versions()
    assert v["numpy"] != "-" and v["ortools"] != "-" and v["pulp"] != "-"


def test_old_folders_have_no_record(tmp_path):
    assert read_studies(tmp_path) == []
