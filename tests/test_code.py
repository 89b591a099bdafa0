"""The code is kept as the README says: ruff's lint and format, mypy's types, rustfmt for native/, and the
kernel's own Rust tests. Here, so that the test command (and with it CI) checks them on every change."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTHON_CODE = ["hamlet", "jobs", "dags", "tests", "bench"]


def tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], check=False, cwd=ROOT, capture_output=True, text=True
    )


def test_ruff_lint_and_format():
    lint = tool("ruff", "check", *PYTHON_CODE)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    layout = tool("ruff", "format", "--check", *PYTHON_CODE)
    assert layout.returncode == 0, layout.stdout + layout.stderr


def test_mypy():
    types = tool("mypy")  # the packages of pyproject.toml's [tool.mypy]
    assert types.returncode == 0, types.stdout + types.stderr


def cargo(*args: str) -> subprocess.CompletedProcess[str]:
    """cargo in native/ (rustup puts it in ~/.cargo/bin, which scripts/bootstrap adds to PATH as here)."""
    found = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    return subprocess.run(
        [found, *args], check=False, cwd=ROOT / "native", capture_output=True, text=True, timeout=600
    )


def test_rustfmt():
    layout = cargo("fmt", "--check")  # native/rustfmt.toml
    assert layout.returncode == 0, layout.stdout[-3000:] + layout.stderr[-3000:]


@pytest.mark.slow  # compiles the kernel's test harness (about 18 s from nothing)
def test_the_kernels_own_unit_tests():
    """native/'s Rust tests (the 128-bit fast path against arbitrary precision, in num.rs). In the dev profile:
    its build takes about half the release profile's (thin LTO, one codegen unit: 32 s), and it checks every
    integer operation for overflow, which the fast path must never reach unchecked."""
    done = cargo("test", "--quiet")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "test result: ok." in done.stdout and " 0 failed" in done.stdout


def test_the_test_schedule_names_files_that_exist():
    """tests/worker_schedule.py orders the workers' files by SECONDS (CI_SECONDS) and groups SCOPES: a renamed
    file there would quietly fall back to xdist's order, or start a second Spark Connect server."""
    from worker_schedule import CI_SECONDS, SCOPES, SECONDS

    named = set(SECONDS) | set(CI_SECONDS) | set(SCOPES) | set(SCOPES.values())
    assert sorted(path for path in named if not (ROOT / path).is_file()) == []
