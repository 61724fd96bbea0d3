"""Compile the engine's hot modules with mypyc into a directory of their own.

    python tools/compile_engine.py [OUT]      (OUT defaults to build/engine)

OUT gets a copy of the `engine` package in which the modules named in COMPILED are C
extensions; the rest stay Python. To use it, run Python with `PYTHONSAFEPATH=1` (or the
current directory, with the sources, comes first) and `PYTHONPATH=OUT`: `make run`,
`make test` and `make bench` do, and the Docker image does. The sources in `engine/` stay
pure Python. OUT/.built holds a digest of the sources OUT was built from: the script does
nothing while it matches them (so make calls it every time), and the tests and the engine
benchmark fail on a build that does not.

The two builds are the same code: `make test` runs every test on both, and they play
seeded games identically. One difference is by design: called with an argument of a type
its annotation excludes (a programming error that mypy flags), the compiled engine raises
TypeError at the call. mypyc (part of mypy, pinned in pyproject.toml) needs a C compiler and
the Python headers. When the build fails, OUT is gone, so nothing stale is left behind to
import, and the exit code is 1.

mypyc compiles what mypy accepts, with a few limits worth knowing when editing the engine:
no `object.__new__(cls)` outside `__new__`, no ClassVar in a dataclass, module constants
marked Final where hot code reads them, and compiled classes cannot be subclassed from
Python (`Game` and `Card` are @final).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPILED = (
    # what runs on every move
    "cards",
    "actions",
    "events",
    "errors",
    "game",
    "view",
    "players",
    "advice",
    # the computer players
    "ai/__init__",
    "ai/base",
    "ai/easy",
    "ai/hard",
    "ai/heuristic",
    "ai/knowledge",
    "ai/search",
    "ai/sim",
    "ai/solver",
    "ai/tracker",
)
"""`rules` stays Python (a pydantic model), and so does `engine/__init__` (the names the
package exports)."""
STAMP = ".built"


def sources_digest(package: Path) -> str:
    """A digest of every Python file of the package at `package` (names and contents), and
    of what compiles them: the Python ABI and the mypy version."""
    try:
        mypy = importlib.metadata.version("mypy")
    except importlib.metadata.PackageNotFoundError:
        mypy = "none"
    digest = hashlib.sha256(f"{sysconfig.get_config_var('EXT_SUFFIX')} mypy {mypy}\0".encode())
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" not in path.parts:
            digest.update(f"{path.relative_to(package).as_posix()}\0".encode())
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def build_digest(build: Path) -> str | None:
    """The sources digest a build at `build` was made from; None if there is none."""
    try:
        return (build / STAMP).read_text().strip()
    except OSError:
        return None


def is_current(build: Path) -> bool:
    """Whether the build at `build` was made from today's `engine/` (and Python and mypy)."""
    return build_digest(build) == sources_digest(ROOT / "engine")


def build(out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if not compiler or shutil.which(compiler[0]) is None:
        raise SystemExit(f"compile_engine: no C compiler ({' '.join(compiler)}): not compiled")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.name}-", dir=out.parent) as tmp:
        work = Path(tmp)
        shutil.copytree(
            ROOT / "engine",
            work / "engine",
            ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c"),
        )
        digest = sources_digest(work / "engine")
        sources = [f"engine/{name}.py" for name in COMPILED]
        config = ["--config-file", str(ROOT / "pyproject.toml")]  # the same, wherever OUT is
        run([sys.executable, "-m", "mypyc", *config, *sources], cwd=work, what="mypyc")
        shutil.rmtree(work / "build")  # C sources and object files
        shutil.rmtree(work / ".mypy_cache", ignore_errors=True)
        check = "import engine, sys; sys.exit(0 if engine.COMPILED else 1)"
        env = {**os.environ, "PYTHONPATH": str(work)}
        run([sys.executable, "-c", check], cwd=work, what="importing the result", env=env)
        # The digest of the copy: a file saved during the build makes the next call build again.
        (work / STAMP).write_text(digest + "\n")
        work.chmod(0o755)  # mkdtemp made it private; the bot may run as another user
        work.rename(out)
        work.mkdir()  # for TemporaryDirectory's clean-up


def run(cmd: list[str], cwd: Path, what: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"compile_engine: {what} failed (output above): engine not compiled")


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build" / "engine").resolve()
    if is_current(out):
        print(f"compile_engine: {out} is up to date")
        return
    build(out)
    print(f"compile_engine: {len(COMPILED)} modules compiled into {out}")


if __name__ == "__main__":
    main()
