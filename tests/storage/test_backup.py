"""`python -m storage backup PATH`: an online backup while moves are being stored, restored
as docs/operating.md says (copy it over the database file), holds every move acknowledged before
the backup began; PATH is never overwritten by accident, nor left half written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from storage import Database, parse_database_url
from storage.backup import BackupRefused, backup

ROOT = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).with_name("crash_writer.py")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def run_backup(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storage", "backup", *args, "--database-url", url],
        capture_output=True,
        text=True,
        env={k: v for k, v in ENV.items() if k != "DATABASE_URL"},
        timeout=60,
        check=False,
    )


class Writer:
    """`crash_writer.py` streaming moves into the database, one transaction each; `acked`
    holds what it reported committed so far (game id -> its last move number)."""

    def __init__(self, url: str, seed: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER), url, str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=ENV,
            text=True,
        )
        self.reports = 0
        self.acked: dict[int, int] = {}
        self._lock = threading.Lock()
        self._more = threading.Condition(self._lock)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            game_id, move, _ = line.split()
            with self._more:
                self.acked[int(game_id)] = max(self.acked.get(int(game_id), 0), int(move))
                self.reports += 1
                self._more.notify_all()

    def wait_for(self, reports: int) -> dict[int, int]:
        """Wait until it has reported ``reports`` commits in all; a copy of `acked`."""
        with self._more:
            if not self._more.wait_for(
                lambda: self.reports >= reports or self.proc.poll() is not None, timeout=60
            ):
                raise AssertionError(f"the writer reported only {self.reports} commits")
            assert self.reports >= reports, self.proc.stderr.read() if self.proc.stderr else ""
            return dict(self.acked)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.communicate(timeout=30)


def back_up_during_moves(url: str, folder: Path) -> tuple[Path, dict[int, int]]:
    """Back up while the writer streams moves; the backup and what was acknowledged before
    it began (game id -> move number)."""
    writer = Writer(url, seed=7)
    try:
        writer.wait_for(300)  # a few games, some finished, in the file and its WAL
        before = writer.wait_for(writer.reports)  # everything acknowledged so far
        started = writer.reports
        # A page per step: many steps, with commits of the writer in between.
        made = run_backup(url, str(folder / "backup.sqlite3"), "--pages", "1")
        after = writer.wait_for(writer.reports + 20)  # it went on writing meanwhile
    finally:
        writer.stop()
    assert made.returncode == 0, made.stderr
    [line] = made.stdout.splitlines()
    source = parse_database_url(url).path
    assert line.startswith(f"backed up {source} to {folder / 'backup.sqlite3'}: "), line
    assert line.endswith(" s, quick_check ok"), line
    assert writer.reports > started and after != before
    assert not (folder / "backup.sqlite3-wal").exists()  # one self-contained file
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []  # no leftover
    # Restore as docs/operating.md says: the bot stopped, the backup copied over the database file.
    restored = folder / "restored" / "durak.sqlite3"
    restored.parent.mkdir()
    shutil.copyfile(folder / "backup.sqlite3", restored)
    return restored, before


@pytest.mark.parametrize("executor", ["aiosqlite", "inline"])
async def test_a_backup_taken_during_a_stream_of_moves_restores_every_acknowledged_move(
    tmp_path: Path, executor: str
) -> None:
    source = tmp_path / "data" / "durak.sqlite3"
    source.parent.mkdir()
    restored, before = back_up_during_moves(f"sqlite:///{source}?executor={executor}", tmp_path)
    async with Database.connect(f"sqlite:///{restored}") as db:
        assert await db.integrity_check() == ["ok"]
        async with db.transaction(readonly=True) as tx:
            for game_id, move in before.items():
                record = await tx.games.get(game_id=game_id)
                assert record.game is not None
                assert record.game.move_number >= move, (game_id, move)
                if record.status == "finished":
                    assert (await tx.results.for_game(game_id=game_id)).game_id == game_id


async def test_an_existing_file_is_replaced_only_with_force(tmp_path: Path) -> None:
    source = tmp_path / "durak.sqlite3"
    url = f"sqlite:///{source}"
    async with Database.connect(url):
        pass
    target = tmp_path / "backup.sqlite3"
    target.write_text("last week's notes")
    refused = run_backup(url, str(target))
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"python -m storage: {target} exists: choose another path, or pass --force"
    ]
    assert target.read_text() == "last week's notes"
    forced = run_backup(url, str(target), "--force")
    assert forced.returncode == 0, forced.stderr
    async with Database.connect(f"sqlite:///{target}") as copy:
        assert await copy.integrity_check() == ["ok"]


def test_a_backup_refuses_the_database_itself_a_missing_one_and_a_missing_folder(
    tmp_path: Path,
) -> None:
    source = tmp_path / "durak.sqlite3"
    url = parse_database_url(f"sqlite:///{source}")
    with pytest.raises(BackupRefused, match="does not exist: check DATABASE_URL"):
        backup(url, tmp_path / "backup.sqlite3")
    source.write_bytes(b"")
    with pytest.raises(BackupRefused, match="is the database file itself"):
        backup(url, source, force=True)
    with pytest.raises(BackupRefused, match=r"folder .*nowhere does not exist"):
        backup(url, tmp_path / "nowhere" / "backup.sqlite3")
    with pytest.raises(BackupRefused, match="nothing to back up"):
        backup(parse_database_url("sqlite:///:memory:"), tmp_path / "backup.sqlite3")


def test_a_file_that_is_no_database_is_not_backed_up(tmp_path: Path) -> None:
    source = tmp_path / "durak.sqlite3"
    source.write_text("name,score\nAlice,3\n" * 100)
    with pytest.raises(BackupRefused, match="is not an SQLite database"):
        backup(parse_database_url(f"sqlite:///{source}"), tmp_path / "backup.sqlite3")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["durak.sqlite3"]
