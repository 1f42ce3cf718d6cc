"""What a path a user named is, asked without an exception: its ``os.stat``, or why there is nothing
to read there. ``Path.exists`` and ``Path.is_dir`` answer False only for a missing file and raise for a
name the file system refuses (``ENAMETOOLONG``, a NUL byte, a loop of links), which a reader must
report at the field or argument that named it, as it reports a missing file. Also: an output directory
made or refused in one line (``made_directory``), and the one line for a file the system would not read
or write (``file_system_line``)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MISSING = "no such file or directory"


def stat_or_problem(path: Path) -> os.stat_result | str:
    """``path``'s ``os.stat``, or why it cannot be had: ``MISSING`` for a name nothing answers to (a
    NUL byte included), else the system's words (``file name too long``)."""
    try:
        return path.stat()
    except ValueError:  # (a NUL byte: no file can have that name)
        return MISSING
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR) or exc.strerror is None:
            return MISSING
        return exc.strerror[:1].lower() + exc.strerror[1:]


def not_a_file(path: Path) -> str | None:
    """None where ``path`` is a regular file, else why not: ``no such file`` (nothing there, or a
    directory), or the system's words (``stat_or_problem``)."""
    found = stat_or_problem(path)
    if isinstance(found, str):
        return "no such file" if found == MISSING else found
    return None if stat.S_ISREG(found.st_mode) else "no such file"


class CannotCreate(ValueError):
    """An output directory a user named that cannot be made (a file in its way, no permission, a name too
    long): one line naming it and why; the command line exits 2."""


def file_system_line(exc: OSError) -> str | None:
    """One line for a file the system would not read or write (a directory where a file goes, no
    permission, a disk full): the file's name and the system's words; None where the error names no
    file (it is then not one a user's path caused)."""
    if exc.filename is None:
        return None
    words = exc.strerror or str(exc)
    names = f"{exc.filename}" if exc.filename2 is None else f"{exc.filename} -> {exc.filename2}"
    return f"{names}: {words[:1].lower()}{words[1:]}"


def made_directory(path: Path) -> Path:
    """``path`` made as a directory, with its parents (nothing done where it is one already)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as exc:
        words = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CannotCreate(f"{path}: cannot make this directory: {words[:1].lower()}{words[1:]}") from None
    return path
