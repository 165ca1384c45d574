"""Fixtures for the browser suite: a JupyterLab server started like `make lab`, and headless Chromium.

The server runs on loopback with a token and isolated Jupyter directories, on a copy of the
notebooks (so autosave never touches the repository), and is stopped by its own process id
at the end, even when a test fails. The browser is Debian's Chromium driven by Playwright
(never a downloaded browser).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import NamedTuple

import nbformat
import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
TOKEN = "dpcourse-e2e"
CELLS_DEADLINE_MS = 240_000  # see wait_for_every_cell
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/e2e" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


def _server_url(runtime: Path, server: subprocess.Popen, log: Path) -> str:
    """The URL of the server started with ``--port=0``, once it answers: the port is the one the server bound and
    wrote to its runtime file (``jpserver-<pid>.json``). A port chosen here, closed and handed to the server would
    be free for any other program on the machine to take while the server starts (seconds on a loaded machine)."""
    info = runtime / f"jpserver-{server.pid}.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with status {server.returncode}; see {log}")
        try:
            url = "http://127.0.0.1:{}".format(json.loads(info.read_text())["port"])
            if urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2).status == 200:
                return url
        except (OSError, ValueError, KeyError):  # not written yet, half written, or not answering yet
            pass
        time.sleep(0.5)
    raise RuntimeError(f"JupyterLab did not start within 120 s; see {log}")


class Uploaded(NamedTuple):
    """A notebook on the suite's server: the URL that opens it in JupyterLab with a fresh workspace, its number
    of cells (what :func:`wait_for_every_cell` waits for) and its path on the server (what :func:`open_notebook`
    opens in a JupyterLab already loaded)."""

    url: str
    cells: int
    path: str


def upload_notebook(lab: str, folder: str, name: str, nb) -> Uploaded:
    """``nb`` written as ``folder/name`` on the suite's server through its contents API (the folder made if
    missing)."""
    for path, body in (
        (folder, {"type": "directory"}),
        (f"{folder}/{name}", {"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))}),
    ):
        request = urllib.request.Request(
            f"{lab}/api/contents/{path}?token={TOKEN}",
            data=json.dumps(body).encode(),
            method="PUT",
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(request, timeout=30).read()
    return Uploaded(f"{lab}/lab/tree/{folder}/{name}?token={TOKEN}&reset", len(nb.cells), f"{folder}/{name}")


# In the JupyterLab loaded in a page (its app is exposed as window.jupyterapp, see `lab`): the notebook at `path`
# opened in a tab of its own and shown, then every tab open before it closed, its kernel shut down. Closed after
# the new one is shown, so that the main area is never empty (JupyterLab would open a launcher there).
_OPEN_IN_THIS_LAB = """async (path) => {
    const app = window.jupyterapp;
    const earlier = [...app.shell.widgets('main')];
    const opened = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
    await opened.context.ready;
    app.shell.activateById(opened.id);
    for (const widget of earlier) {
        if (widget === opened) continue;
        if (widget.context) widget.context.model.dirty = false;  // its changes are not asked about: a test's copy
        if (widget.sessionContext) await widget.sessionContext.shutdown();
        widget.dispose();
    }
}"""


def open_notebook(page, uploaded: Uploaded) -> None:
    """Open ``uploaded`` in ``page`` and wait until every cell of it is in the page.

    The first time JupyterLab is loaded at the notebook's URL; after that the notebook is opened in the JupyterLab
    already loaded there, as a student opens a second notebook, and the tabs open before are closed with their
    kernels shut down, so that the page's cells, panels and prompts are this notebook's alone. Loading JupyterLab
    costs Chromium about 4 s of CPU on this 2-core machine, as much as showing a notebook of 60 cells; a test file
    that opens its six notebooks in one page pays it once."""
    if page.evaluate("() => !!window.jupyterapp"):
        page.evaluate(_OPEN_IN_THIS_LAB, uploaded.path)
    else:
        page.goto(uploaded.url)
    wait_for_every_cell(page, uploaded.cells)


def wait_for_every_cell(page, count: int) -> None:
    """Wait until all ``count`` cells of the notebook open in ``page`` are in the page.

    JupyterLab 4 (windowing mode ``contentVisibility``, its default) opens a notebook with its first screen and
    inserts the other cells a few at a time when the browser is idle, or every 3 s when it never is. On a loaded
    machine a notebook of 60 cells takes a minute or more, and a locator for a late cell, or a count of panels,
    would see only the cells inserted so far. The deadline is sized for that machine, not an idle one."""
    from playwright.sync_api import expect

    cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
    expect(cells).to_have_count(count, timeout=CELLS_DEADLINE_MS)


def save_screenshot(target, path: Path, *, full_page: bool = False) -> None:
    """A screenshot of ``target`` (a page or a locator) saved at ``path``, as every test of the suite takes one.

    With ``caret="initial"``: Playwright's default (``"hide"``) adds a style sheet to the page for the shot and takes
    it away after, so Chromium restyles all of JupyterLab's page twice per shot. The read-through alone (121 screens),
    two pairs of runs interleaved: Chromium 46–47 s of CPU against 51–55 s."""
    extra = {"full_page": True} if full_page else {}  # a locator's screenshot has no full_page
    target.screenshot(path=str(path), caret="initial", **extra)


def _skip_without_a_browser() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    _skip_without_a_browser()
    home = tmp_path_factory.mktemp("jupyter")
    work = home / "work"
    shutil.copytree(ROOT / "notebooks", work / "notebooks")
    # No news pop-up: that comes from the shipped jupyter/overrides.json, which `make` installs into the
    # environment as `make lab` and Binder do (the screenshots show it works); the suite only turns off autosave.
    settings = home / "settings" / "@jupyterlab"
    (settings / "docmanager-extension").mkdir(parents=True)
    (settings / "docmanager-extension" / "plugin.jupyterlab-settings").write_text('{"autosave": false}')
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
    )
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        "--port=0",  # the system's choice, read back from the runtime file
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={work}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        # window.jupyterapp, through which open_notebook opens a notebook in a JupyterLab already loaded
        "--LabApp.expose_app_in_browser=True",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = open(home / "lab.log", "w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield _server_url(home / "runtime", server, home / "lab.log")
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


# One Playwright and one Chromium per test worker, for every file of the suite: Playwright's sync API runs an
# event loop of its own, and a second one started in the same worker (while this one runs) refuses to start.
@pytest.fixture(scope="session")
def browser():
    _skip_without_a_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
