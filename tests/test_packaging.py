"""The package as it is built and installed: metadata, data files, the kernel's environment.

scripts/check_wheel.sh (run by .ci/run) installs the real wheel into a fresh venv;
these are the quick checks of the same promises.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import gradviz
from gradviz import runner
from gradviz.app import demos

from .helpers import LESSONS

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def test_every_package_folder_is_listed():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "gradviz").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert listed == found | {"gradviz.resources"}
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"gradviz.resources": "resources"}


def test_one_version_source_and_the_metadata():
    project = PYPROJECT["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gradviz.__version__"}
    assert project["name"] == "gradviz-autograd"  # "gradviz" on PyPI is someone else's
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert "MIT License" in (REPO / "LICENSE").read_text()
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]  # SPDX instead
    assert project["scripts"] == {"gradviz": "gradviz.cli:main"}
    assert project["gui-scripts"] == {"gradviz-app": "gradviz.cli:app_main"}
    proc = subprocess.run([sys.executable, "-m", "gradviz", "--version"], capture_output=True,
                          text=True, timeout=120, cwd=REPO)
    assert proc.stdout.strip() == f"gradviz {gradviz.__version__}"


def test_demos_come_from_the_package_resources():
    folder = demos.demo_dir()
    assert (folder.parent / "__init__.py").is_file()
    assert {d.name for d in demos.list_demos()} == LESSONS
    assert {p.name for p in folder.glob("*.py")} == {p.name for p in (REPO / "resources" / "demos").glob("*.py")}


def test_no_demos_is_an_error_not_an_empty_list(tmp_path, monkeypatch, capsys):
    with pytest.raises(demos.DemosMissing, match="installed without its resources"):
        demos.list_demos(tmp_path)
    monkeypatch.setattr(demos, "demo_dir", lambda: tmp_path)
    from gradviz import cli

    assert cli.main(["demos"]) == cli.EXIT_USAGE
    assert "no demos in" in capsys.readouterr().err
    assert cli.main(["run", "--demo", "retain_graph"]) == cli.EXIT_USAGE


def test_the_sdist_carries_the_tests_and_the_data(tmp_path):
    code = "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))"
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (sdist,) = tmp_path.glob("*.tar.gz")
    names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
    for needed in ("LICENSE", "tests/conftest.py", "tests/helpers.py", "tests/test_api.py",
                   "resources/__init__.py", "resources/demos/03_retain_graph.py",
                   "gradviz/graph/snapshot.schema.json", "MANIFEST.in", "scripts/setup.sh"):
        assert needed in names, needed


# --- the kernel's environment -------------------------------------------------------------------


class FakeDist:
    def __init__(self, location: Path, direct_url: dict | None = None):
        self.location = location
        self.direct_url = direct_url

    def locate_file(self, name: str) -> Path:
        return self.location / name

    def read_text(self, name: str) -> str | None:
        return json.dumps(self.direct_url) if name == "direct_url.json" and self.direct_url else None


def _fake(monkeypatch, dist):
    def distribution(name):
        assert name == runner.DISTRIBUTION
        if dist is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return dist

    monkeypatch.setattr(runner.importlib.metadata, "distribution", distribution)


def test_the_kernel_path_points_into_a_source_tree_only_when_gradviz_is_not_installed(
    monkeypatch, tmp_path
):
    here = Path(runner.__file__).resolve().parents[1]
    _fake(monkeypatch, None)
    assert runner.import_path() == runner.PACKAGE_PARENT == str(here)
    _fake(monkeypatch, FakeDist(tmp_path, {"url": here.as_uri(), "dir_info": {"editable": True}}))
    assert runner.import_path() is None  # the editable finder maps gradviz to this tree
    other = tmp_path / "other-clone"
    _fake(monkeypatch, FakeDist(tmp_path, {"url": other.as_uri(), "dir_info": {"editable": True}}))
    assert runner.import_path() == str(here)  # installed elsewhere: this tree must win
    monkeypatch.setattr(runner, "_site_dirs", lambda: {here})
    _fake(monkeypatch, FakeDist(here))
    assert runner.import_path() is None  # a wheel: found in site-packages


def test_the_kernel_environment_is_clean(monkeypatch, tmp_path):
    monkeypatch.setenv("SECRET_TOKEN", "x")
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    env = runner.kernel_environment(str(tmp_path))
    assert env["HOME"] == env["TMPDIR"] == str(tmp_path)
    assert "SECRET_TOKEN" not in env
    # gradviz's own entry first, then what this process was given (its dependencies
    # may come from there: without them the kernel's OS layers are not found)
    own = runner.import_path()
    assert env.get("PYTHONPATH") == ":".join(p for p in (own, "/somewhere/else") if p)
