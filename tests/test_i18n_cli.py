"""``gradviz run`` in Korean: the explanation printed in the chosen language, ``--json``
keeping the English beside the translation; and the Qt-free rooms' words (timeline,
files, trust) in Korean through the same catalog."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradviz import i18n
from gradviz.graph.explain import _EXPLANATIONS, explain

HANGUL = re.compile(r"[\uac00-\ud7a3]")
ROOT = Path(__file__).resolve().parent.parent
#: a statement that fails with a message gradviz explains (an integer tensor asked for
#: gradients), after one that runs
FAILING = "import torch\na = torch.ones(2)\nb = torch.tensor([1, 2], requires_grad=True)\n"


@pytest.fixture(autouse=True)
def _english_after(monkeypatch):
    yield
    i18n.set_language("en")


def gradviz(*args: str, lang: str) -> subprocess.CompletedProcess:
    env = {**os.environ, i18n.ENV_VAR: lang}
    return subprocess.run(
        [sys.executable, "-m", "gradviz", *args],
        capture_output=True, text=True, timeout=300, env=env, cwd=ROOT,
    )  # fmt: skip


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("i18n") / "fails.py"
    path.write_text(FAILING)
    return path


def test_every_explanation_has_korean():
    i18n.set_language("ko")
    for _pattern, sentence in _EXPLANATIONS:
        korean = i18n.translate("Explain", sentence)
        assert korean != sentence and HANGUL.search(korean), sentence


def test_run_json_in_korean(script):
    proc = gradviz("run", str(script), "--json", lang="ko")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["language"] == "ko"
    assert list(report)[:2] == ["mode", "language"]
    failed = [s for s in report["statements"] if not s["ok"]]
    assert len(failed) == 1
    error = failed[0]["error"]
    english = explain(error["message"])
    assert english is not None and "floating point" in english
    assert error["explanation"] == english  # the stable key stays English
    assert HANGUL.search(error["explanation_translated"]), error["explanation_translated"]
    assert "부동소수점" in error["explanation_translated"]
    keys = list(error)
    assert keys.index("explanation_translated") == keys.index("explanation") + 1
    ok = [s for s in report["statements"] if s["ok"]]
    assert ok and all(s["error"] is None for s in ok)


def test_run_json_in_english(script):
    proc = gradviz("run", str(script), "--json", lang="en")
    report = json.loads(proc.stdout)
    assert report["language"] == "en"
    error = next(s for s in report["statements"] if not s["ok"])["error"]
    assert error["explanation_translated"] == error["explanation"]
    assert not HANGUL.search(proc.stdout)


def test_run_text_in_korean(script):
    proc = gradviz("run", str(script), lang="ko")
    assert proc.returncode == 1, proc.stderr
    english = explain("only Tensors of floating point and complex dtype can require gradients")
    i18n.set_language("ko")
    korean = i18n.translate("Explain", english)
    assert f"이유: {korean}" in proc.stdout, proc.stdout
    assert english not in proc.stdout
    # the English run prints the English sentence, as before
    english_run = gradviz("run", str(script), lang="en")
    assert f"why: {english}" in english_run.stdout
    assert not HANGUL.search(english_run.stdout)


def test_demos_in_korean():
    proc = gradviz("demos", "-v", lang="ko")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines and all(HANGUL.search(line) for line in lines), proc.stdout
    assert any(line.startswith("two_paths ") for line in lines)  # names stay English


def test_timeline_files_and_trust_in_korean(tmp_path):
    from gradviz.app.files import read_path, refuse_to_overwrite
    from gradviz.app.timeline import describe_step
    from gradviz.app.trust import BADGE_TEXT, RESTRICTED, banner_text

    i18n.set_language("ko")
    paused = {"paused": {"line": 7, "iteration": 2, "iterations": 3,
                         "frames": [{"name": "Net.forward"}]}}  # fmt: skip
    assert describe_step(paused) == (
        "7번 줄 · 반복 2 · forward", "7번 줄 앞에서 멈춤, 3번 중 2번째 반복, Net.forward 안"
    )
    assert describe_step({"cursor": 0}) == ("시작", "아직 아무것도 실행하지 않았습니다")
    image = tmp_path / "picture.py"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    opened = read_path(image)
    assert opened.kind == "refused" and "PNG 이미지 같습니다" in opened.message
    refused = refuse_to_overwrite(image)
    assert refused is not None and "덮어쓰지 않았습니다" in refused
    assert i18n.translate("Trust", BADGE_TEXT[RESTRICTED]) == "제한 모드"
    assert HANGUL.search(banner_text(tmp_path))
    i18n.set_language("en")
    assert describe_step({"cursor": 0}) == ("start", "nothing has run yet")
    assert "it looks like a PNG image" in read_path(image).message


def test_lang_option_chooses_the_language_over_the_environment(tmp_path):
    """gradviz run --lang ko explains in Korean with GRADVIZ_LANG=en set; --json keeps
    its English keys and adds the Korean sentence beside the English one."""
    script = tmp_path / "bad.py"
    script.write_text("import torch\na = torch.ones(2)\nb = a @ torch.ones(3)\n")
    env = {**os.environ, "GRADVIZ_LANG": "en"}
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--lang", "ko", "--json", str(script)],
        capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path,
    )
    report = json.loads(proc.stdout)
    assert report["language"] == "ko"
    error = report["statements"][-1]["error"]
    assert error["explanation"] and error["explanation_translated"]
    assert any("\uac00" <= ch <= "\ud7a3" for ch in error["explanation_translated"])
    assert not any("\uac00" <= ch <= "\ud7a3" for ch in error["explanation"])
