"""``setup.sh`` in an image, as Gradescope builds one (course issue #30): a minimal Debian bookworm made here
with debootstrap (no container registry is needed, only Debian's package mirror), turned into a container by
``buildah from scratch`` (chroot isolation, vfs storage, as root), the autograder's zip unpacked at
``/autograder/source`` and ``bash /autograder/source/setup.sh`` run in it with apt and pip reaching their
servers as they do on this machine; the result committed as an image, and one right submission graded in a
fresh container of that image, with no network but the loopback, by ``/autograder/run_autograder``.

Bookworm's minimal base has no Python: setup.sh installs python3-venv (3.11). Measured on an idle 2-core
machine: debootstrap 80 s, setup.sh 100 s, commit and a new container 50 s, the run 15 s (the whole test 150 s,
290 s under a load of 5.5); about 2.8 GB of disk at the peak, all under pytest's temporary folder and removed at
the end. Skipped, with the reason, without root, debootstrap, buildah, unshare or ip (``.ci/run`` installs
debootstrap, buildah and iproute2).
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import nbformat
import pytest

from tests.classroom import grading_scenarios as gs
from tests.classroom.test_autograder import _check_spec, _metadata, _zip

SUITE = "bookworm"
MIRROR = os.environ.get("DPCOURSE_IMAGE_MIRROR", "http://deb.debian.org/debian")
DEBOOTSTRAP_TIMEOUT = 900
SETUP_TIMEOUT = 1200  # apt-get and pip install of requirements.txt on a loaded machine
RUN_TIMEOUT = 600
# What lets apt and pip reach their servers from this machine, handed to setup.sh (chroot isolation shares the
# host's network; the environment does not carry over by itself).
PASSED_ENVIRONMENT = ("PIP_INDEX_URL", "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")
HOST_CA = "/etc/ssl/dpcourse-host-ca.crt"  # inside the image
# A new network namespace with only the loopback up (the kernel and the grader talk over 127.0.0.1), which chroot
# isolation shares: the grading run can fetch nothing, as Gradescope promises nothing is.
NO_NETWORK = ("unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh")


def _why_not() -> str | None:
    """Why the image cannot be built here, or None when it can."""
    if os.geteuid() != 0:
        return "building the image needs root (debootstrap, buildah's chroot isolation and vfs storage)"
    missing = [tool for tool in ("debootstrap", "buildah", "unshare", "ip") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install debootstrap buildah iproute2; .ci/run does)"
    return None


WHY_NOT = _why_not()


class Buildah:
    """buildah with its own storage under ``folder`` (vfs: no overlay or fuse needed), nothing shared."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.base = ["buildah", "--root", str(folder / "storage"), "--runroot", str(folder / "run"),
                     "--storage-driver", "vfs"]  # fmt: skip

    def __call__(self, *arguments: str, timeout: float = 300, prefix: Sequence[str] = ()) -> str:
        done = subprocess.run([*prefix, *self.base, *arguments], capture_output=True, text=True, timeout=timeout,
                              check=False)  # fmt: skip
        assert done.returncode == 0, f"buildah {arguments[0]} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        return done.stdout.strip()

    def run(self, container: str, command: Sequence[str], *, env: dict[str, str], timeout: float,
            prefix: Sequence[str] = ()) -> str:  # fmt: skip
        options = [f"--env={name}={value}" for name, value in env.items()]
        return self("run", "--isolation", "chroot", *options, container, "--", *command, timeout=timeout,
                    prefix=prefix)  # fmt: skip


def _mounts_under(folder: Path) -> list[str]:
    """Mount points below ``folder`` (from /proc/self/mountinfo, whose fifth field is the mount point)."""
    inside = str(folder.resolve()) + "/"
    points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    return [p for p in points if p.startswith(inside)]


@pytest.fixture
def buildah(tmp_path: Path) -> Iterator[Buildah]:
    """A private buildah store, emptied afterwards: its containers and images (about 2.8 GB) are removed, but
    never through a mount left behind (a bind mount of /dev or /proc would be deleted on the host)."""
    tool = Buildah(tmp_path / "buildah")
    yield tool
    subprocess.run([*tool.base, "rm", "--all"], capture_output=True, timeout=300, check=False)
    subprocess.run([*tool.base, "rmi", "--all", "--force"], capture_output=True, timeout=300, check=False)
    left = _mounts_under(tool.folder)
    assert not left, f"mounts left under the buildah store, not removed: {left}"
    shutil.rmtree(tool.folder)


def _host_ca_bundle() -> Path | None:
    """The CA bundle pip trusts here (PIP_CERT, else the system's), so that pip in the image trusts it too."""
    for candidate in (os.environ.get("PIP_CERT"), os.environ.get("SSL_CERT_FILE"),
                      ssl.get_default_verify_paths().cafile):  # fmt: skip
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def _unpack_as_gradescope(archive: Path, rootfs: Path) -> None:
    """The zip unpacked at /autograder/source and its run_autograder copied to /autograder."""
    source = rootfs / "autograder" / "source"
    source.mkdir(parents=True)
    with zipfile.ZipFile(archive) as opened:
        opened.extractall(source)
    shutil.copy(source / "run_autograder", rootfs / "autograder" / "run_autograder")


def _setup_environment(rootfs: Path) -> dict[str, str]:
    environment = {name: os.environ[name] for name in PASSED_ENVIRONMENT if name in os.environ}
    bundle = _host_ca_bundle()
    if bundle is not None:
        inside = rootfs / HOST_CA.lstrip("/")
        inside.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(bundle, inside)
        environment["PIP_CERT"] = HOST_CA
    return environment


@pytest.mark.image
@pytest.mark.slow
@pytest.mark.timeout(2400)
@pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
def test_setup_sh_builds_an_image_that_grades(tmp_path, buildah):
    try:
        build = buildah("from", "scratch")
    except AssertionError as refused:
        pytest.skip(f"buildah cannot make a container here: {refused}")
    rootfs = Path(buildah("mount", build))
    debootstrap = subprocess.run(
        ["debootstrap", "--variant=minbase", SUITE, str(rootfs), MIRROR],
        capture_output=True, text=True, timeout=DEBOOTSTRAP_TIMEOUT, check=False,
    )  # fmt: skip
    assert debootstrap.returncode == 0, debootstrap.stdout[-4000:] + debootstrap.stderr[-4000:]
    assert not (rootfs / "usr" / "bin" / "python3").exists()  # setup.sh must install its Python itself

    _unpack_as_gradescope(_zip(tmp_path), rootfs)
    setup = buildah.run(build, ["bash", "/autograder/source/setup.sh"], env=_setup_environment(rootfs),
                        timeout=SETUP_TIMEOUT)  # fmt: skip
    assert "setup.sh: dpcourse" in setup, setup[-4000:]
    buildah("commit", "--quiet", build, "dpcourse-autograder-test", timeout=600)
    buildah("rm", build)

    # Gradescope: a fresh container of the image per submission, the files placed, run_autograder run.
    graded = buildah("from", "--pull-never", "dpcourse-autograder-test")
    rootfs = Path(buildah("mount", graded))
    (rootfs / "autograder" / "submission").mkdir()
    nbformat.write(gs.right(), rootfs / "autograder" / "submission" / gs.NAME)
    (rootfs / "autograder" / "submission_metadata.json").write_text(json.dumps(_metadata()))
    log = buildah.run(graded, ["bash", "/autograder/run_autograder"], env={}, timeout=RUN_TIMEOUT,
                      prefix=NO_NETWORK)  # fmt: skip

    results = rootfs / "autograder" / "results" / "results.json"
    result = json.loads(results.read_text())
    _check_spec(result)
    assert results.stat().st_uid == 0, "results.json must be root's"
    outputs = "\n".join(f"{t['name']}: {t['output']}" for t in result["tests"])
    assert [t["status"] for t in result["tests"]] == ["passed"] * len(gs.EXERCISES), log[-4000:] + outputs
    assert result["score"] == pytest.approx(len(gs.EXERCISES)), log[-4000:]
