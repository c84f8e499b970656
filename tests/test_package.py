"""The package as a stranger gets it: ``uv build`` makes a wheel and an sdist, and the wheel installed into a fresh
virtual environment gives a working ``chainsum`` with no extra (``pip install chainsum``), and ``chainsum serve``
with the server extra, the page's static files included. Runs where ``uv`` is on the PATH (CI installs it); it
installs from uv's cache, so it needs the registry only when that cache is cold."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

import chainsum

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "support-session.json"
UV = shutil.which("uv")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(UV is None, reason="uv is not on the PATH (pip install uv)")]


def _uv(*args: str, cwd: Path = ROOT) -> str:
    assert UV is not None
    done = subprocess.run([UV, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"uv {' '.join(args)}: {done.stderr[-2000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _uv("build", "--quiet", "--out-dir", str(out))
    return out


def _venv(tmp: Path, wheel: Path, extra: str | None) -> Path:
    _uv("venv", "--quiet", "--python", sys.executable, str(tmp / "venv"))
    python = tmp / "venv" / "bin" / "python"
    target = f"chainsum[{extra}] @ {wheel.as_uri()}" if extra else str(wheel)
    _uv("pip", "install", "--quiet", "--python", str(python), target)
    return tmp / "venv" / "bin" / "chainsum"


def _run(command: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(command), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def test_the_wheel_and_sdist_carry_the_page_and_the_package(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    names = zipfile.ZipFile(wheel).namelist()
    for page_file in ("index.html", "app.js", "style.css"):
        assert f"chainsum/server/static/{page_file}" in names
    assert "chainsum/cli/_app.py" in names
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    assert any(m.endswith("src/chainsum/server/static/index.html") for m in members)


def test_pip_install_chainsum_gives_every_command(dist: Path, tmp_path: Path) -> None:
    """No extra: the CLI works (typer and rich are core); ``serve`` names the extra it needs, in one line."""
    (wheel,) = dist.glob("*.whl")
    chainsum_bin = _venv(tmp_path, wheel, None)
    version = _run(chainsum_bin, "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip() == f"chainsum {chainsum.__version__}"
    compact = _run(
        chainsum_bin, "compact", str(EXAMPLE), "--budget", "800", "-o", str(tmp_path / "o.json"), cwd=tmp_path
    )
    assert compact.returncode == 0, compact.stderr
    assert compact.stderr.startswith("tokens 2801 -> ") and (tmp_path / "o.json").is_file()
    helped = _run(chainsum_bin, "--help", cwd=tmp_path)
    for command in ("inspect", "validate", "repair", "convert", "compact", "replay", "expand", "search", "serve"):
        assert command in helped.stdout
    serve = _run(chainsum_bin, "serve", "--port", "1", cwd=tmp_path)
    assert serve.returncode == 2
    assert 'pip install "chainsum[server]"' in serve.stderr and "Traceback" not in serve.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_server_extra_serves_the_page(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    chainsum_bin = _venv(tmp_path, wheel, "server")
    port = _free_port()
    server = subprocess.Popen(
        [str(chainsum_bin), "serve", "--port", str(port), "--db", str(tmp_path / "c.db"), "--log-level", "warning"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        page = _wait_for(f"http://127.0.0.1:{port}/", server)
        assert "<html" in page.lower() and "chainsum" in page.lower()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/app.js", timeout=10) as response:
            assert response.status == 200 and b"import" in response.read()
    finally:
        server.terminate()
        server.communicate(timeout=30)


def _wait_for(url: str, server: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"chainsum serve exited {server.returncode}: {server.stderr.read() if server.stderr else ''}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode("utf-8")
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"chainsum serve did not answer {url} within 60 s")
