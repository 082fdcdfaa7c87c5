"""The page `chrysalis ui` hands the browser: a local file that posts the one-time sign-in
token to the inspector, so the token is never in a process's arguments (``/proc/PID/cmdline``
is readable by every user) nor in an environment.

The file is 0600 in a fresh 0700 directory (under ``$XDG_RUNTIME_DIR`` when there is one);
the directories earlier runs left are removed on the next run. A copy that lingers is spent
or expired within the token's lifetime anyway.
"""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import stat
import tempfile
from pathlib import Path

PREFIX = "chrysalis-ui-"
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<title>Chrysalis memory inspector: signing in</title>
</head>
<body onload="document.forms[0].submit()">
<form method="post" action="{action}">
<input type="hidden" name="token" value="{token}">
<input type="hidden" name="memory" value="{memory}">
<p>Signing in to the memory inspector… <button type="submit">Open it</button></p>
<p>This page works once, for {ttl:.0f} seconds: run <code>chrysalis ui</code> again if it
has expired.</p>
</form>
</body>
</html>
"""


def write_signin_page(action: str, token: str, memory: str | None, ttl: float) -> Path:
    """Write the sign-in page posting ``token`` (and ``memory``) to ``action``; return its
    path. Removes the pages earlier runs left first."""
    parent = os.environ.get("XDG_RUNTIME_DIR") or None
    if parent is not None and not Path(parent).is_dir():
        parent = None
    remove_old_pages(Path(parent or tempfile.gettempdir()))
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))  # 0700, a name nobody guessed
    path = folder / "signin.html"
    text = PAGE.format(
        action=html.escape(action), token=html.escape(token), memory=html.escape(memory or ""),
        ttl=ttl,
    )  # fmt: skip
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def remove_old_pages(parent: Path) -> None:
    """Remove the sign-in folders of earlier runs in ``parent``: ours only (a folder of that
    name another user made in a shared /tmp is left alone), never through a symlink."""
    uid = os.getuid()
    for folder in parent.glob(PREFIX + "*"):
        with contextlib.suppress(OSError):
            info = folder.lstat()
            if stat.S_ISDIR(info.st_mode) and info.st_uid == uid:
                shutil.rmtree(folder, ignore_errors=True)
