"""Where the store's server is, found as the CLI finds it (cli/src/backend.rs): the store
directory is ``dir``, else ``$MEMLEDGER_DIR``, else the config file's ``dir``, else
``$XDG_DATA_HOME/memledger``, else ``~/.local/share/memledger``; its server answers on the Unix
socket ``<dir>/memledger.sock`` (mode 0600: the user's alone, and a request there without a token
is the store's owner). Over TCP the store's own token is ``<dir>/token``
(``memledger serve --print-token``); a principal's token comes from ``token=`` or
``$MEMLEDGER_TOKEN``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SOCKET = "memledger.sock"
TOKEN = "token"


def _config_dir_setting() -> Path | None:
    path = os.environ.get("MEMLEDGER_CONFIG")
    if path:
        config = Path(path)
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or (os.path.join(os.path.expanduser("~"), ".config"))
        config = Path(base) / "memledger" / "config.toml"
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10 reads no config file
        return None
    try:
        with open(config, "rb") as f:
            value = tomllib.load(f).get("dir")
    except (OSError, ValueError):
        return None
    return Path(os.path.expanduser(value)) if isinstance(value, str) and value else None


def store_dir(dir: str | os.PathLike[str] | None = None) -> Path:
    """The store directory the CLI would use."""
    if dir is not None:
        return Path(dir)
    env = os.environ.get("MEMLEDGER_DIR")
    if env:
        return Path(env)
    configured = _config_dir_setting()
    if configured is not None:
        return configured
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg) / "memledger"
    home = os.environ.get("HOME")
    return Path(home) / ".local/share/memledger" if home else Path(".memledger")


def store_token(dir: Path) -> str | None:
    """The store's own bearer token (the owner's), if the server has made one."""
    try:
        token = (dir / TOKEN).read_text().strip()
    except OSError:
        return None
    return token if len(token) >= 32 else None


@dataclass(frozen=True)
class Endpoint:
    """Where requests go: ``base_url`` over TCP, or the Unix socket ``uds``."""

    base_url: str
    uds: str | None
    token: str | None


def resolve(
    url: str | None, token: str | None, dir: str | os.PathLike[str] | None
) -> Endpoint:
    """The endpoint of a client made with these arguments (see the module's doc)."""
    token = token or os.environ.get("MEMLEDGER_TOKEN") or None
    url = url or os.environ.get("MEMLEDGER_URL") or None
    if url:
        if token is None:
            # The store's own token, when the caller can read the store's directory.
            token = store_token(store_dir(dir))
        return Endpoint(base_url=url.rstrip("/"), uds=None, token=token)
    socket = store_dir(dir) / SOCKET
    from .errors import NoServer

    if not socket.exists():
        raise NoServer(
            f"no memledger server answers on {socket}: start one with `memledger serve` "
            "(or pass url= and token=)"
        )
    return Endpoint(base_url="http://localhost", uds=str(socket), token=token)
