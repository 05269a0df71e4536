"""Workers forked from a fork server (runtime/forkserver.py) behave as freshly started ones.

The probe worker (tests/runtime/batch_probe.py) records which process ran its ``preload()``: a
forked worker finds it done by its server, a fresh one does it itself.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from migrate.runtime import forkserver
from migrate.runtime.batch import run_batch
from tests.paths import REPO
from tests.runtime.test_limits import _marked

PROBE = "tests.runtime.batch_probe"


@pytest.fixture
def env():
    yield dict(os.environ, PYTHONPATH=str(REPO), CUDA2TILE_FORK_SERVER="1")
    forkserver.close_all()


def where(results: dict) -> dict:
    (entry,) = results.values()
    assert entry["status"] == "ok", entry
    return entry


def test_a_forked_worker_finds_the_imports_done_and_sees_each_calls_folder_and_environment(env, tmp_path,
                                                                                              monkeypatch):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    seen = []
    for folder, mark in ((one, "first"), (two, "second")):
        monkeypatch.chdir(folder)
        call_env = dict(env, TILELANG_CACHE_DIR=mark, TMPDIR=str(folder))  # variables of one call
        seen.append(where(run_batch(PROBE, None, [{"key": 0, "do": "where"}], timeout=30, env=call_env,
                                    startup=60, fork=True)))
    first, second = seen
    assert first["preloaded_by"] != first["pid"] and first["preloaded_by"] == second["preloaded_by"]
    assert first["pid"] != second["pid"]
    assert (first["cwd"], first["tmp"], first["mark"]) == (str(one), str(one), "first")
    assert (second["cwd"], second["tmp"], second["mark"]) == (str(two), str(two), "second")
    assert first["argv0"] == PROBE
    # any other variable may change what the imports did: another server, with it set from the start
    other = where(run_batch(PROBE, None, [{"key": 0, "do": "where"}], timeout=30, env=dict(env, C2T_OTHER="1"),
                            startup=60, fork=True))
    assert other["preloaded_by"] not in (first["preloaded_by"], other["pid"])


def test_without_fork_or_with_the_server_off_a_worker_starts_fresh(env, monkeypatch):
    fresh = where(run_batch(PROBE, None, [{"key": 0, "do": "where"}], timeout=30, env=env, startup=60))
    assert fresh["preloaded_by"] == fresh["pid"]
    monkeypatch.setenv("CUDA2TILE_FORK_SERVER", "0")
    off = where(run_batch(PROBE, None, [{"key": 0, "do": "where"}], timeout=30, env=env, startup=60, fork=True))
    assert off["preloaded_by"] == off["pid"]


def test_forked_workers_restart_after_each_crash_or_hang(env):
    marker = uuid.uuid4().hex
    todo = ["ok", "hang", "ok", "segfault", "ok", "child", "ok", "where"]
    results = run_batch(PROBE, None, [{"key": i, "do": d} for i, d in enumerate(todo)], timeout=2,
                        max_memory=None, env=dict(env, C2T_TEST_MARK=marker), startup=60, fork=True)
    assert {k: e["status"] for k, e in results.items()} == {
        0: "ok", 1: "timeout", 2: "ok", 3: "crash", 4: "ok", 5: "timeout", 6: "ok", 7: "ok"}
    assert results[0]["value"] == 0 and results[4]["value"] == 8 and results[6]["value"] == 12
    assert "killed by SIGSEGV" in results[3]["message"]
    assert results[7]["preloaded_by"] != results[7]["pid"]
    time.sleep(0.3)
    # the hung workers and the grandchild went with their groups; only the server is left
    assert len(_marked(marker)) == 1


def test_a_forked_worker_is_held_to_the_memory_limit(env):
    results = run_batch(PROBE, None, [{"key": 0, "do": "memory"}, {"key": 1, "do": "where"}], timeout=20,
                        max_memory=512 << 20, env=env, startup=60, fork=True)
    assert results[0]["status"] == "memory", results[0]
    assert results[1]["status"] == "ok" and results[1]["preloaded_by"] != results[1]["pid"]


def test_the_server_and_its_workers_end_when_their_client_is_killed(tmp_path):
    marker = uuid.uuid4().hex
    client = tmp_path / "client.py"
    client.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from migrate.runtime.batch import run_batch
        print("started", flush=True)
        run_batch({PROBE!r}, None, [{{"key": 0, "do": "hang"}}], timeout=600, startup=60, fork=True)
    """))
    env = dict(os.environ, PYTHONPATH=str(REPO), C2T_TEST_MARK=marker, CUDA2TILE_FORK_SERVER="1")
    proc = subprocess.Popen([sys.executable, str(client)], env=env, stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"started"
    deadline = time.monotonic() + 60
    while len(_marked(marker)) < 3 and time.monotonic() < deadline:  # client, server, worker
        time.sleep(0.1)
    assert len(_marked(marker)) == 3
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while _marked(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _marked(marker) == []


def test_a_process_keeps_at_most_two_idle_servers_of_a_module(env):
    marker = uuid.uuid4().hex
    for i in range(4):
        where(run_batch(PROBE, None, [{"key": 0, "do": "where"}], timeout=30,
                        env=dict(env, C2T_TEST_MARK=marker, C2T_OTHER=str(i)), startup=60, fork=True))
    time.sleep(0.3)
    assert len(_marked(marker)) == forkserver.KEEP == 2
