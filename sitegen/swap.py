"""Swapping a freshly written folder in for the old one, so that OUT is always one whole site, the old or the new,
whatever is killed when (the build's _site/, `make dist`'s _dist/).

    new = staging(out)        # an empty sibling OUT.new-<pid>-<random>, after cleaning what killed runs left
    ... write everything into new ...
    swap_in(new, out)         # OUT is now the new folder; the old one is deleted

OUT stays a real directory at the same path (what `make serve`, `make dev`, `make dist` and the tests open by
name, per request), so nothing that reads it needs to know about the swap:
- On Linux the swap is one system call, renameat2(RENAME_EXCHANGE) (through ctypes): OUT and the new folder trade
  places atomically, so at every instant OUT is a complete site. The old site, now at OUT.new-*, is renamed to
  OUT.old-* and deleted. A kill after the exchange leaves only a stale OUT.new-* / OUT.old-* beside the new OUT.
- Where that call does not exist or the file system refuses it, two renames: OUT -> OUT.old-*, then new -> OUT.
  A kill between the two leaves no OUT for the moment; the next staging() renames that complete old site back
  before anything else (it was whole when it was moved), so the site is again the old one.
- staging() removes every OUT.new-* and OUT.old-* whose process (the pid in its name) is no longer running: the
  leftovers of killed runs, 18 MB each, never accumulate; a build running beside this one keeps its folder.

Faults can be injected for tests through the environment: SITEGEN_SWAP_KILL_AT=<point> kills the process
(SIGKILL, nothing runs after it) at that point, one of KILL_POINTS; SITEGEN_SWAP_EXCHANGE=0 forces the two-rename
path.
"""
from __future__ import annotations

import ctypes
import errno
import os
import re
import secrets
import shutil
import signal
import sys
from pathlib import Path

KILL_POINTS = ("staged", "exchanged", "aside", "renamed-out", "renamed-new")
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_LEFTOVER = re.compile(r"\.(?:new|old)-(?:(?P<pid>\d+)-)?[\w-]+$")


def _fault(point: str) -> None:
    """SIGKILL this process at `point` when SITEGEN_SWAP_KILL_AT names it (tests: a kill at each step)."""
    if os.environ.get("SITEGEN_SWAP_KILL_AT") == point:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def _sibling(out: Path, kind: str) -> Path:
    return out.parent / f"{out.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"


def _leftovers(out: Path) -> list[Path]:
    """OUT.new-* and OUT.old-* beside OUT, each with the pid of the run that made it (None: an older name)."""
    found = []
    for path in out.parent.glob(f"{out.name}.*"):
        m = _LEFTOVER.fullmatch(path.name[len(out.name):])
        if m and path.is_dir() and not path.is_symlink():
            found.append(path)
    return sorted(found)


def _pid_of(path: Path, out: Path) -> int | None:
    m = _LEFTOVER.fullmatch(path.name[len(out.name):])
    return int(m["pid"]) if m and m["pid"] else None


def _running(pid: int | None) -> bool:
    if pid is None:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out: Path) -> Path | None:
    """If OUT is missing because a two-rename swap was killed between its renames, rename the old site back
    (the newest OUT.old-* of a run no longer running); returns what was put back."""
    if os.path.lexists(out):
        return None
    stranded = [p for p in _leftovers(out) if ".old-" in p.name and not _running(_pid_of(p, out))]
    if not stranded:
        return None
    newest = max(stranded, key=lambda p: p.stat().st_mtime)
    os.rename(newest, out)
    return newest


def clean_leftovers(out: Path) -> list[Path]:
    """Put a stranded old site back (recover), then delete every OUT.new-* / OUT.old-* of a run no longer
    running; returns what was deleted."""
    out = Path(out)
    recover(out)
    removed = []
    for path in _leftovers(out):
        if not _running(_pid_of(path, out)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def staging(out: Path) -> Path:
    """A new empty folder OUT.new-<pid>-<random> beside OUT (mode 0755), after cleaning up killed runs."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(out)
    new = _sibling(out, "new")
    new.mkdir(mode=0o755)
    os.chmod(new, 0o755)   # (whatever the umask)
    return new


def _exchange(a: Path, b: Path) -> bool:
    """renameat2(a, b, RENAME_EXCHANGE): True once swapped, False where the call is unavailable or refused."""
    if os.environ.get("SITEGEN_SWAP_EXCHANGE") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):   # a libc without it (glibc before 2.28)
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):   # kernel or file system says no
        return False
    raise OSError(code, os.strerror(code), str(b))


def swap_in(new: Path, out: Path) -> None:
    """Make the complete folder `new` the folder `out` (see the module docstring); the old one is deleted."""
    new, out = Path(new), Path(out)
    _fault("staged")
    if not os.path.lexists(out):
        os.rename(new, out)
        return
    if _exchange(new, out):
        _fault("exchanged")
        old = _sibling(out, "old")
        os.rename(new, old)   # (`new` holds the old site now)
    else:
        old = _sibling(out, "old")
        os.rename(out, old)
        _fault("renamed-out")
        try:
            os.rename(new, out)
        except OSError:
            os.rename(old, out)
            raise
        _fault("renamed-new")
    _fault("aside")
    shutil.rmtree(old, ignore_errors=True)
