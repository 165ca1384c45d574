"""The deploy/ recipes run end to end, as their platforms would run them, on a small class with a hostile student.

The commands are read from deploy/kubernetes/grade-job.yaml and deploy/github/grade.yml, never copied here;
only what the platform sets is substituted (``JOB_COMPLETION_INDEX``; ``${{ matrix.shard }}``). Each
Kubernetes container, and each GitHub runner, is a bubblewrap sandbox built from the recipe: its own pid
namespace with the command as process 1 (when it exits, everything it left dies, as in a container), the
host's system read-only, and writable only the volumes the recipe mounts writable (the pod's emptyDirs, the
results claim), as the user and with the capabilities its securityContext gives. ``python`` is .venv's, and
stands for the image's. A runner's own user is root here, with a `sudo` that only switches users; its
setup steps (checkout, setup-python, make venv, the submissions' download) are laid out beforehand.

One student (mallory) hands in a notebook whose answer cell leaves a daemon behind that, for ten minutes,
tries to write a forged report everywhere reports are gathered. The merged report must hold every honest row
and nothing planted, and the daemon must have found nowhere to write.
"""

from __future__ import annotations

import csv
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from dpcourse.classroom.grading.run import in_shard
from tests.classroom.grading_scenarios import EXERCISES, NAME, WRONG, released, right, with_answers, write_course

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"
NOBODY = 65534
HOSTILE = "mallory"
FORGED = "planted-by-a-submission"
#: The daemon's log, in a folder of the test's (root's, world-writable, sticky) in the pod's or runner's /tmp:
#: what a run's user id leaves at the top of /tmp is removed with it after the run.
EVIDENCE = "evidence"
HOSTILE_LOG = f"/tmp/{EVIDENCE}/hostile.log"
RUNNER_HOME = "/home/runner"
WORKSPACE = f"{RUNNER_HOME}/work/course/course"
STEP_TIMEOUT = 600

if os.geteuid() != 0 or shutil.which("bwrap") is None or shutil.which("setpriv") is None:
    pytest.skip("simulating pods and runners needs root, bubblewrap and setpriv", allow_module_level=True)


# --------------------------------------------------------------------------- the class


def forged_report() -> str:
    header = "student,notebook,exercise,status,points,max_points,message,hint,mistake,integrity\n"
    rows = [f"{student},small,max-queries,passed,19,19,{FORGED},,," for student in ("ghost", "alice", HOSTILE)]
    return header + "\n".join(rows) + "\n"


def plant_targets(shards: int) -> list[str]:
    """Every place a report is gathered, in a pod (its container paths) and on a runner."""
    places = ["/course/results", "/course/results/shards", "/course/graded", f"{WORKSPACE}/results/shards"]
    return [f"{place}/shard-{index}.csv" for place in places for index in range(shards)] + [
        "/course/results/grades.csv",
        f"{WORKSPACE}/results/grades.csv",
    ]


def hostile_answer(targets: list[str]) -> str:
    """An answer cell that starts a daemon (its own session, so it outlives the run) planting forged reports."""
    daemon = f"""import os, time
targets, forged, log = {targets!r}, {forged_report()!r}, {HOSTILE_LOG!r}

def plant(path):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + '.tmp', 'w') as out:
            out.write(forged)
        os.replace(path + '.tmp', path)
        return 'planted'
    except OSError as err:
        return type(err).__name__

with open(log, 'a') as out:
    out.write('daemon %d started as uid %d gid %d\\n' % (os.getpid(), os.getuid(), os.getgid()))
deadline, first = time.time() + 600, True
while time.time() < deadline:
    outcomes = [(plant(path), path) for path in targets]
    with open(log, 'a') as out:
        for outcome, path in outcomes:
            if first or outcome == 'planted':
                out.write('%s %s\\n' % (outcome, path))
    first = False
    time.sleep(0.2)
"""
    return (
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', {daemon!r}], start_new_session=True,\n"
        "                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "K_max = 538"
    )


def write_class(root: Path, shards: int) -> None:
    """root/source (the course) and root/submissions: two right, one wrong, one hostile."""
    write_course(
        root,
        {
            "alice": {NAME: right()},
            "bob": {NAME: with_answers(released(), **WRONG)},
            "carol": {NAME: right()},
            HOSTILE: {NAME: with_answers(right(), max_queries=hostile_answer(plant_targets(shards)))},
        },
    )


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


# --------------------------------------------------------------------------- a sandbox standing for a container or a VM


def make_dirs(path: str) -> list[str]:
    """bwrap arguments making ``path`` and its parents, each open to every user (bwrap's own default is 0700)."""
    parts = Path(path).parts[1:]
    return [arg for n in range(1, len(parts) + 1) for arg in ("--perms", "0755", "--dir", "/" + "/".join(parts[:n]))]


def python_home() -> list[str]:
    """bwrap arguments that let any user run .venv's Python where it lives under root's private home."""
    base = Path(sys.base_prefix).resolve()
    if not base.is_relative_to("/root"):
        return []
    return ["--tmpfs", "/root", *make_dirs(str(base)), "--ro-bind", str(base), str(base)]


#: The host's top-level folders a sandbox leaves out (empty, or what the recipe mounts there).
NOT_THE_SYSTEM = {"proc", "dev", "sys", "tmp", "home", "root", "run", "mnt", "media", "course", "srv"}


def system_root() -> list[str]:
    """The host's system read-only; /home, /root, /tmp and the rest empty and read-only unless mounted later."""
    argv = ["--proc", "/proc", "--dev", "/dev"]
    for entry in sorted(os.scandir("/"), key=lambda e: e.name):
        if entry.name in NOT_THE_SYSTEM:
            continue
        if entry.is_symlink():
            argv += ["--symlink", os.readlink(entry.path), entry.path]
        elif entry.is_dir():
            argv += ["--ro-bind", entry.path, entry.path]
    return argv + python_home()


def checkout_binds() -> list[str]:
    """bwrap arguments that let any user reach this checkout read-only (.venv's Python stands for the image's, and its
    dpcourse is the checkout's), wherever the checkout lives: in a folder the sandbox leaves out (a clone under /tmp or
    /root, laid after the recipe's own mounts there) or below a folder only root may enter (``mktemp -d``'s 0700),
    which an 0755 tmpfs replaces. Nothing when the system's read-only copy already holds it, open to every user."""
    here = str(ROOT)
    if ROOT.parts[1] in NOT_THE_SYSTEM:
        return [*make_dirs(here), "--ro-bind", here, here]
    closed = next((p for p in reversed(ROOT.parents) if not p.stat().st_mode & stat.S_IXOTH), None)
    if closed is None:
        return []
    return ["--tmpfs", str(closed), *make_dirs(here), "--ro-bind", here, here]


def sandbox(mounts: list[tuple[Path, str, bool]], env: dict[str, str], cwd: str, command: list[str]) -> list[str]:
    """``command`` as process 1 of a new pid namespace, on a read-only root where only ``mounts`` (host folder,
    path inside, writable) are added."""
    argv = ["bwrap", "--die-with-parent", "--unshare-pid", "--as-pid-1", "--cap-add", "ALL", *system_root()]
    binds = checkout_binds()
    for inside in ["/tmp", *(inside for _, inside, _ in mounts), *([str(ROOT)] if binds else [])]:
        argv += make_dirs(inside)
    argv += ["--remount-ro", "/"]
    for host, inside, writable in mounts:
        argv += ["--bind" if writable else "--ro-bind", str(host), inside]
    argv += binds  # after the mounts: a recipe's own /tmp must not hide a checkout cloned there
    argv += ["--clearenv", "--chdir", cwd]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return argv + ["--", *command]


@pytest.fixture(scope="module", autouse=True)
def _pods_can_be_simulated() -> None:
    """Skip this file, with bwrap's own words, where the kernel refuses the namespaces a pod's sandbox needs (an
    unprivileged container, a sysctl that forbids them): a sandbox like every pod's, running ``true``, first."""
    probe = subprocess.run(sandbox([], {}, "/", ["true"]), capture_output=True, text=True, timeout=120, check=False)
    if probe.returncode != 0:
        pytest.skip(f"bubblewrap cannot make a pod's namespaces here: {probe.stderr.strip()[-400:]}")


def run(argv: list[str], what: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=STEP_TIMEOUT, check=False)
    assert done.returncode == 0, f"{what} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def evidence_folder(tmp: Path) -> None:
    (tmp / EVIDENCE).mkdir()
    (tmp / EVIDENCE).chmod(0o1777)


def emptydir(path: Path) -> Path:
    path.mkdir(parents=True)
    path.chmod(0o777)  # what the kubelet makes
    return path


# --------------------------------------------------------------------------- Kubernetes


def image_env() -> dict[str, str]:
    """The ENV lines of deploy/Dockerfile."""
    env: dict[str, str] = {}
    for line in (ROOT / "deploy" / "Dockerfile").read_text().splitlines():
        if line.startswith("ENV "):
            env.update(item.split("=", 1) for item in shlex.split(line[4:]))
    return env


def as_user(pod: dict[str, Any], container: dict[str, Any]) -> list[str]:
    """setpriv for the container's user, group, capabilities and no_new_privs (its context over the pod's)."""
    context = {**pod.get("securityContext", {}), **container["securityContext"]}
    capabilities = context.get("capabilities", {})
    assert capabilities.get("drop") == ["ALL"], f"{container['name']} must drop every capability"
    bounding = ",".join(["-all", *(f"+{c.lower()}" for c in capabilities.get("add", []))])
    argv = ["setpriv", "--reuid", str(context["runAsUser"]), "--regid", str(context["runAsGroup"])]
    argv += ["--clear-groups", "--inh-caps", "-all", "--bounding-set", bounding]
    if context.get("allowPrivilegeEscalation") is False:
        argv.append("--no-new-privs")
    return [*argv, "--"]


def pod_volumes(pod: dict[str, Any], claims: dict[str, Path], here: Path) -> dict[str, tuple[Path, bool]]:
    """Each volume of the pod: a claim's host folder, or a fresh emptyDir; and whether it may be written."""
    volumes = {}
    for volume in pod["volumes"]:
        if "persistentVolumeClaim" in volume:
            claim = volume["persistentVolumeClaim"]
            volumes[volume["name"]] = (claims[claim["claimName"]], not claim.get("readOnly", False))
        else:
            assert set(volume) == {"name", "emptyDir"}, volume
            volumes[volume["name"]] = (emptydir(here / volume["name"]), True)
            if volume["name"] == "scratch":  # the pod's /tmp
                evidence_folder(here / volume["name"])
    return volumes


def run_pod(
    pod: dict[str, Any], claims: dict[str, Path], image: list[tuple[Path, str, bool]], here: Path, env: dict[str, str]
) -> None:
    """The init containers one after another, then the container, each in its own sandbox, as the kubelet would."""
    assert not pod.get("shareProcessNamespace", False) and len(pod["containers"]) == 1
    volumes = pod_volumes(pod, claims, here)
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        mounts = list(image)
        for mount in container["volumeMounts"]:
            host, writable = volumes[mount["name"]]
            mounts.append((host, mount["mountPath"], writable and not mount.get("readOnly", False)))
        command = [*as_user(pod, container), *container["command"], *container.get("args", [])]
        run(sandbox(mounts, env, container["workingDir"], command), f"container {container['name']}")


def at_once(step: Callable[[Any], Any], items: Iterable[Any]) -> None:
    """``step`` for every item, all at the same time (a Job's pods, a matrix's runners); the first failure raised."""
    items = list(items)
    with ThreadPoolExecutor(max_workers=len(items)) as pool:
        for done in [pool.submit(step, item) for item in items]:
            done.result()


def kubernetes_run(course: Path, sim: Path) -> Path:
    """Every shard's pod, then the merge Job's; the results claim's folder."""
    documents = yaml.safe_load_all((ROOT / "deploy" / "kubernetes" / "grade-job.yaml").read_text())
    shards_job, merge_job = (d for d in documents if d["kind"] == "Job")
    results = sim / "results"
    results.mkdir(parents=True)
    os.chown(results, NOBODY, NOBODY)  # the claim is writable by the pods' user
    claims = {"course-submissions": course / "submissions", "course-results": results}
    image = [(course / "source", "/course/notebooks", False)]  # deploy/Dockerfile: COPY notebooks ./notebooks
    env = {"PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", **image_env()}
    assert shards_job["spec"]["parallelism"] == shards_job["spec"]["completions"]
    pod = shards_job["spec"]["template"]["spec"]
    # all shards' pods at once, as the Job's parallelism has them run; the merge Job after them
    at_once(
        lambda index: run_pod(pod, claims, image, sim / f"pod-{index}", {**env, "JOB_COMPLETION_INDEX": str(index)}),
        range(shards_job["spec"]["completions"]),
    )
    run_pod(merge_job["spec"]["template"]["spec"], claims, image, sim / "pod-merge", env)
    return results


# --------------------------------------------------------------------------- GitHub Actions

SUDO = """#!/bin/sh
# sudo on a hosted runner, for a caller who is root already: `sudo -u USER CMD` runs CMD as USER.
if [ "$1" = "-u" ]; then
    user=$2
    shift 2
    exec setpriv --reuid "$(id -u "$user")" --regid "$(id -g "$user")" --clear-groups -- "$@"
fi
exec "$@"
"""


def expand(text: str, shard: int | None) -> str:
    """The workflow's expressions: only ``${{ matrix.shard }}`` is the platform's to fill in."""
    if shard is not None:
        text = text.replace("${{ matrix.shard }}", str(shard))
    assert "${{" not in text, f"an expression the simulation does not know: {text}"
    return text


def step_script(step: dict[str, Any], shard: int | None, scripts: Path, number: int) -> str:
    """The driver's lines for one step: a run step as Actions runs it with `shell: bash`, an artifact action
    by what it does; the checkout, setup-python, make venv and the submissions' download are laid out before."""
    uses = step.get("uses", "").split("@")[0]
    if "run" in step:
        if step["run"].strip() == "make venv":
            return ""
        (scripts / f"step-{number}.sh").write_text(expand(step["run"], shard))
        env = [f"{key}={shlex.quote(expand(str(value), shard))}" for key, value in step.get("env", {}).items()]
        return " ".join([*env, f"bash --noprofile --norc -eo pipefail /steps/step-{number}.sh\n"])
    if uses == "actions/upload-artifact":
        options = {key: expand(str(value), shard) for key, value in step["with"].items()}
        artifact = shlex.quote(f"/artifacts/{options['name']}")
        return f"mkdir {artifact}\ncp -- {options['path']} {artifact}/\n"  # the path is a glob: no match fails
    if uses == "actions/download-artifact" and "pattern" in step["with"]:
        options = {key: expand(str(value), shard) for key, value in step["with"].items()}
        assert options["merge-multiple"] == "True"
        path = shlex.quote(options["path"])
        return f"mkdir -p {path}\ncp -- /artifacts/{options['pattern']}/* {path}/\n"
    assert uses in {"actions/checkout", "actions/setup-python", "actions/download-artifact"}, uses
    return ""


def run_runner(job: dict[str, Any], shard: int | None, course: Path, here: Path, artifacts: Path) -> Path:
    """One job on a fresh runner: the workspace (the course, .venv, the submissions) laid out, then its steps
    in one sandbox, so that what a step leaves running is there for the next. The workspace's host folder."""
    home, tmp, scripts = here / "home", emptydir(here / "tmp"), here / "steps"
    evidence_folder(tmp)
    workspace = home / Path(WORKSPACE).relative_to(RUNNER_HOME)
    workspace.mkdir(parents=True)
    home.chmod(0o750)  # as useradd makes a home folder on Ubuntu 24.04
    shutil.copytree(course / "source", workspace / "notebooks")
    (workspace / ".venv").symlink_to(VENV_BIN.parent)
    shutil.copytree(course / "submissions", workspace / "submissions")
    scripts.mkdir()
    (scripts / "sudo").write_text(SUDO)
    (scripts / "sudo").chmod(0o755)
    driver = "set -e\n" + "".join(step_script(s, shard, scripts, n) for n, s in enumerate(job["steps"]))
    (scripts / "driver.sh").write_text(driver)
    assert job.get("defaults", {}).get("run", {}).get("shell", "bash") == "bash"
    mounts = [
        (home, RUNNER_HOME, True),
        (tmp, "/tmp", True),
        (artifacts, "/artifacts", True),
        (scripts, "/steps", False),
    ]
    env = {"HOME": RUNNER_HOME, "PATH": f"/steps:{VENV_BIN}:/usr/bin:/bin", "LANG": "C.UTF-8"}
    run(sandbox(mounts, env, WORKSPACE, ["bash", "/steps/driver.sh"]), f"runner {here.name}")
    return workspace


def github_run(course: Path, sim: Path) -> Path:
    """Every shard's runner, then the merge job's; the merge runner's workspace."""
    workflow = yaml.safe_load((ROOT / "deploy" / "github" / "grade.yml").read_text())
    assert workflow["defaults"]["run"]["shell"] == "bash"
    artifacts = sim / "artifacts"
    artifacts.mkdir(parents=True)
    # every shard's runner at once, as a matrix runs them; the merge job after them (it `needs` the grade job)
    assert workflow["jobs"]["merge"]["needs"] in ("grade", ["grade"])
    at_once(
        lambda shard: run_runner(workflow["jobs"]["grade"], shard, course, sim / f"runner-{shard}", artifacts),
        workflow["jobs"]["grade"]["strategy"]["matrix"]["shard"],
    )
    return run_runner(workflow["jobs"]["merge"], None, course, sim / "runner-merge", artifacts)


# --------------------------------------------------------------------------- the runs


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deploy-class")
    write_class(root, shards=4)
    return root


def assert_honest_rows_and_nothing_planted(rows: list[dict[str, str]], log: Path) -> None:
    by_student: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_student.setdefault(row["student"], []).append(row)
    assert set(by_student) == {"alice", "bob", "carol", HOSTILE}
    assert not [row for row in rows if FORGED in row["message"] or row["points"] == "19"]
    for student, status in {"alice": "passed", "carol": "passed", "bob": "failed"}.items():
        assert sorted(r["exercise"] for r in by_student[student]) == sorted(EXERCISES), student
        assert {r["status"] for r in by_student[student]} == {status}, by_student[student]
    attempts = log.read_text()
    # nobody's rights (its group, no other) under a user id of the run's own
    started = re.search(r"daemon \d+ started as uid (\d+) gid 65534\n", attempts)
    assert started is not None and int(started.group(1)) not in (0, 65534), attempts
    assert "planted" not in attempts, attempts


def test_the_kubernetes_jobs_grade_publish_and_merge_and_a_submission_plants_nothing(course, tmp_path):
    results = kubernetes_run(course, tmp_path)
    shards = sorted(p.name for p in (results / "shards").iterdir())
    assert shards == [f"shard-{i}.csv" for i in range(4)]
    logs = list(tmp_path.glob(f"pod-*/scratch/{EVIDENCE}/hostile.log"))
    assert len(logs) == 1 and in_shard(HOSTILE, (int(logs[0].parts[-4].split("-")[1]), 4))
    assert_honest_rows_and_nothing_planted(read_rows(results / "grades.csv"), logs[0])


def test_the_github_workflow_grades_uploads_and_merges_and_a_submission_plants_nothing(course, tmp_path):
    workspace = github_run(course, tmp_path)
    artifacts = tmp_path / "artifacts"
    uploaded = sorted(str(p.relative_to(artifacts)) for p in artifacts.glob("shard-*/*"))
    assert uploaded == [f"shard-{i}/shard-{i}.csv" for i in range(4)]
    assert (artifacts / "grades" / "grades.csv").is_file()
    logs = list(tmp_path.glob(f"runner-*/tmp/{EVIDENCE}/hostile.log"))
    assert len(logs) == 1 and in_shard(HOSTILE, (int(logs[0].parts[-4].split("-")[1]), 4))
    assert_honest_rows_and_nothing_planted(read_rows(workspace / "results" / "grades.csv"), logs[0])
