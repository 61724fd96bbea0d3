"""Compile the engine's hot modules with mypyc into a directory of their own.

    python tools/compile_engine.py [OUT]      (OUT defaults to build/engine)

OUT gets a copy of the `engine` package in which the modules named in COMPILED are C
extensions; the rest stay Python. Put OUT first on PYTHONPATH to use it: `make run`,
`make test` and `make bench` do, and the Docker image does. The source tree itself stays
pure Python, so an edit to `engine/*.py` is never hidden by a stale compiled module.

Compiled and pure engine are the same code and behave the same: `make test` runs every
test against both. mypyc (part of mypy, pinned in pyproject.toml) turns the type-checked
code into C: about twice the games per second (see the README). It needs a C compiler and
the Python headers. When the build fails, OUT is removed, so nothing stale is left to use,
and the exit code is 1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPILED = ("cards", "actions", "events", "errors", "game", "view", "players")
"""The modules that run on every move. `rules` stays Python (a pydantic model), and so do
the computer players in `engine.ai` (not yet written for mypyc)."""


def build(out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.name}-", dir=out.parent) as tmp:
        work = Path(tmp)
        shutil.copytree(
            ROOT / "engine",
            work / "engine",
            ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c"),
        )
        sources = [f"engine/{name}.py" for name in COMPILED]
        run([sys.executable, "-m", "mypyc", *sources], cwd=work)
        shutil.rmtree(work / "build")  # C sources and object files
        shutil.rmtree(work / ".mypy_cache", ignore_errors=True)
        check = "import engine, sys; sys.exit(0 if engine.COMPILED else 1)"
        env = {**os.environ, "PYTHONPATH": str(work)}
        run([sys.executable, "-c", check], cwd=work, env=env)
        work.rename(out)
        work.mkdir()  # for TemporaryDirectory's clean-up


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"compile_engine: {' '.join(cmd[1:3])} failed: the engine is not compiled")


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build" / "engine").resolve()
    build(out)
    print(f"compile_engine: {', '.join(COMPILED)} compiled into {out}")


if __name__ == "__main__":
    main()
