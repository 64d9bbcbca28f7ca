"""A real ``memledger serve`` for the tests, on a temporary store: the binary is
``$MEMLEDGER_BIN`` (scripts/test.sh sets it to the one cargo built), else
``$CARGO_TARGET_DIR/release/memledger``, else ``memledger`` on the PATH.

The server is started with ``--http 127.0.0.1:0`` and is ready when it prints the address it
listens on (it binds the socket and the port before it prints): no test waits for a time.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import re
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memledger import AsyncMemledger, Memledger


def binary() -> str:
    explicit = os.environ.get("MEMLEDGER_BIN")
    if explicit:
        return explicit
    target = os.environ.get("CARGO_TARGET_DIR")
    if target and Path(target, "release", "memledger").exists():
        return str(Path(target, "release", "memledger"))
    found = shutil.which("memledger")
    if not found:
        raise RuntimeError("no memledger binary: set MEMLEDGER_BIN (scripts/test.sh does)")
    return found


def clean_env(tmp: Path) -> dict[str, str]:
    """The environment of a memledger process: none of the caller's memledger settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLEDGER_")}
    env["MEMLEDGER_CONFIG"] = str(tmp / "no-config.toml")
    env["MEMLEDGER_NO_SERVER"] = "0"
    return env


SERVING = re.compile(r"memledger serve: serving (?P<dir>.+) on (?P<socket>\S+) and http://(?P<addr>\S+)")


class Server:
    """``memledger serve`` on ``dir``, stopped (SIGTERM, then waited for) by :meth:`stop`."""

    def __init__(self, dir: Path, *args: str) -> None:
        self.dir = dir
        self.log: list[str] = []
        self._ready = threading.Event()
        self.proc = subprocess.Popen(
            [binary(), "--dir", str(dir), "serve", "--http", "127.0.0.1:0", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(dir.parent),
        )
        self._match: re.Match[str] | None = None
        # Reads the server's messages for its whole life (a pipe nobody reads would fill).
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._ready.wait(60) or self._match is None:
            self.stop()
            raise RuntimeError("memledger serve did not start:\n" + "".join(self.log))
        self.url = f"http://{self._match['addr']}"
        self.socket = Path(self._match["socket"])
        self.token = (dir / "token").read_text().strip()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            if not self._ready.is_set():
                self._match = SERVING.search(line)
                if self._match:
                    self._ready.set()
        self._ready.set()  # it exited

    def client(self, token: str | None = None, **kw: Any) -> Memledger:
        return Memledger(self.url, token=token or self.token, **kw)

    def aclient(self, token: str | None = None, **kw: Any) -> AsyncMemledger:
        return AsyncMemledger(self.url, token=token or self.token, **kw)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(30)
        self._reader.join(5)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the session, erasures allowed; each test works in scopes of its own."""
    served = Server(tmp_path_factory.mktemp("served") / "store", "--allow-erase")
    yield served
    served.stop()


@pytest.fixture
def scope() -> str:
    """A scope no other test writes to."""
    return f"test:{uuid.uuid4().hex[:12]}"


class Synced:
    """An ``AsyncMemledger`` whose methods are run to completion on a loop of its own, so one
    test body drives both clients; async iterators come back as lists."""

    def __init__(self, client: AsyncMemledger) -> None:
        self._client = client
        self._loop = asyncio.new_event_loop()

    def run(self, awaitable: Any) -> Any:
        return self._loop.run_until_complete(awaitable)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if inspect.isasyncgenfunction(method):

            def collect(*args: Any, **kw: Any) -> list[Any]:
                async def gather() -> list[Any]:
                    return [x async for x in method(*args, **kw)]

                return self.run(gather())

            return collect
        if not callable(method) or not inspect.iscoroutinefunction(method):
            return method

        def call(*args: Any, **kw: Any) -> Any:
            return self.run(method(*args, **kw))

        return call

    def close(self) -> None:
        self.run(self._client.aclose())
        self._loop.close()


@pytest.fixture(params=["sync", "async"])
def client(request: pytest.FixtureRequest, server: Server) -> Iterator[Any]:
    """Each test that takes it runs twice: with ``Memledger`` and with ``AsyncMemledger``."""
    if request.param == "sync":
        c = server.client()
        yield c
        c.close()
    else:
        s = Synced(server.aclient())
        yield s
        s.close()
