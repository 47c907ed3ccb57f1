"""Installing never fails for want of the extensions: without a C compiler the package installs,
imports and works on the walk, and the sandbox fails closed.

Neither ``safefs._native`` (openat2) nor ``safefs.sandbox._native`` (Landlock and the launcher,
built from ``safefs/sandbox/launcher.c``) can be built then; both are optional.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.project.source_tree import NETWORK_TROUBLE, copy_sources

pytestmark = pytest.mark.slow  # installs safefs into a fresh environment


CHECK = """
import os, tempfile, safefs
from safefs.sandbox import Refused, make_sandbox
assert not safefs.capabilities().native_extension
d = tempfile.mkdtemp()
os.symlink("/etc", os.path.join(d, "out"))
with safefs.Root(d) as root:
    root.write_text("a/b", "x", parents=True)
    try:
        root.read_text("out/passwd")
    except safefs.PathEscapeError:
        escaped = False
    else:
        escaped = True
    try:
        safefs.Root(d, resolver="openat2")
    except safefs.ResolverUnavailableError as exc:
        unavailable = str(exc)
    sandbox = make_sandbox(root)
    assert isinstance(sandbox, Refused), sandbox.describe()
    print(root.resolver, root.read_text("a/b"), escaped, sandbox.refusal, "|", unavailable)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the extensions are Linux only")
def test_install_without_a_compiler_falls_back_to_the_walk(tmp_path: Path) -> None:
    target = tmp_path / "site"
    env = dict(os.environ, CC="/bin/false", PIP_DISABLE_PIP_VERSION_CHECK="1")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(copy_sources(tmp_path / "source")),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if build.returncode and any(s in build.stderr for s in NETWORK_TROUBLE):
        pytest.skip("the package index is unreachable for the isolated build")
    assert build.returncode == 0, build.stderr[-2000:]
    package = target / "safefs"
    assert (package / "_root.py").exists() and (package / "sandbox" / "landlock.py").exists()
    built = sorted(str(p.relative_to(target)) for p in package.rglob("_native*"))
    assert not built, f"no compiler, yet extensions were built: {built}"
    # -S: no site-packages, so the editable install of the checkout cannot shadow the copy.
    run = subprocess.run(
        [sys.executable, "-S", "-c", CHECK],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(target)),
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    resolver, content, escaped, rest = run.stdout.split(" ", 3)
    refusal, unavailable = rest.split(" | ")
    assert (resolver, content, escaped) == ("walk", "x", "False")
    assert "native extension is not built" in unavailable
    assert "the sandbox's native extension is not built" in refusal
    assert "only --sandbox=off runs commands unconfined" in refusal
