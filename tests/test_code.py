"""The code is kept as the README says: ruff's lint and format, mypy's types. Here, so that the test command
(and with it CI) checks them on every change."""

import subprocess
import sys
from pathlib import Path

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
