"""The batch-grading recipes in deploy/ (a Kubernetes Indexed Job, a GitHub Actions matrix): their structure,
that the commands they run are the instructors' guide's "Grading at scale" commands (book/instructors/scale.md,
which the grader's own command line accepts), and that what a submission runs has nowhere to write where the
reports are gathered. tests/deploy/test_deploy_run.py runs them; tests/deploy/test_deploy_schemas.py validates
them against the platforms' schemas.
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from dpcourse.classroom.cli import add_grade_command

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "deploy" / "kubernetes" / "grade-job.yaml"
WORKFLOW = ROOT / "deploy" / "github" / "grade.yml"
SHARD_INDEX = {"${JOB_COMPLETION_INDEX}": "I", "${SHARD}": "I"}  # the workflow's step sets SHARD to matrix.shard
# What the grading container needs, as root, to run each submission as nobody and to end it.
GRADER_CAPABILITIES = {"CHOWN", "DAC_OVERRIDE", "KILL", "SETGID", "SETUID"}
SCALE_PAGE = ROOT / "book" / "instructors" / "scale.md"


def guide_commands() -> list[str]:
    text = SCALE_PAGE.read_text()
    assert text.startswith("# Grading at scale\n")
    return [line.strip() for line in re.findall(r"^(python -m dpcourse grade .*)$", text, flags=re.M)]


def normalised(command: str, shards: int) -> str:
    for placeholder, letter in SHARD_INDEX.items():
        command = command.replace(placeholder, letter)
    command = command.replace(f"/{shards} ", "/N ").replace(f"--shards {shards} ", "--shards N ")
    command = command.removeprefix("sudo ").replace(".venv/bin/python ", "python ")
    return " ".join(command.split())


def grade_commands(texts: list[str]) -> list[str]:
    return [t.strip() for text in texts for t in text.splitlines() if "-m dpcourse grade" in t]


def accepted(command: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_grade_command(parser.add_subparsers(dest="command"))
    command = command.replace("I/N", "0/4").replace("-I.", "-0.").replace("--shards N", "--shards 4")
    argv = shlex.split(command)
    return parser.parse_args(argv[argv.index("dpcourse") + 1 :])


def kubernetes_documents() -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    documents = list(yaml.safe_load_all(JOB.read_text()))
    shards_job, merge_job = (d for d in documents if d["kind"] == "Job")
    return shards_job, merge_job, documents


def containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*pod.get("initContainers", []), *pod["containers"]]


def claim_volumes(pod: dict[str, Any], claim: str) -> set[str]:
    return {v["name"] for v in pod["volumes"] if v.get("persistentVolumeClaim", {}).get("claimName") == claim}


def workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def test_the_guide_has_the_shard_and_merge_commands_and_the_grader_accepts_them():
    commands = guide_commands()
    assert len(commands) == 2
    shard, merge = (accepted(c) for c in commands)
    assert shard.sandbox == "none" and shard.shard == (0, 4) and shard.report == Path("results/shards/shard-0.csv")
    assert merge.merge == [Path("results/shards/shard-*.csv")] and merge.shards == 4
    assert merge.source == Path("notebooks") and merge.report == Path("results/grades.csv")


def test_the_kubernetes_job_is_indexed_one_pod_per_shard_and_runs_the_guides_commands():
    shards_job, merge_job, _ = kubernetes_documents()
    spec = shards_job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"]
    assert spec["backoffLimitPerIndex"] >= 0 and "Kubernetes >= 1.28" in JOB.read_text().split("apiVersion")[0]
    shards = spec["completions"]
    pod = spec["template"]["spec"]
    (grade,) = pod["initContainers"]
    merge = merge_job["spec"]["template"]["spec"]["containers"][0]
    commands = grade_commands(grade["args"]) + grade_commands(merge["args"])
    assert [normalised(c, shards) for c in commands] == guide_commands()
    assert f"--shard ${{JOB_COMPLETION_INDEX}}/{shards} " in commands[0] and f"--shards {shards} " in commands[1]


def test_kubernetes_grades_where_the_results_volume_is_not_and_publishes_one_file_from_a_clean_container():
    shards_job, _, _ = kubernetes_documents()
    pod = shards_job["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False and not pod.get("shareProcessNamespace", False)
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 65534
    (grade,), (publish,) = pod["initContainers"], pod["containers"]
    results = claim_volumes(pod, "course-results")
    emptydirs = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    grade_mounts = {m["mountPath"]: m for m in grade["volumeMounts"]}
    assert not results & {m["name"] for m in grade["volumeMounts"]}, "submissions run where results are gathered"
    assert grade_mounts["/course/submissions"].get("readOnly") is True
    report = Path(shlex.split(grade_commands(grade["args"])[0])[-1])
    report_mount = grade_mounts["/course/" + str(report.parent)]
    assert report_mount["name"] in emptydirs
    # the grader is root, so that the submissions it runs as nobody cannot write its report's folder
    assert "chmod 0755 " + str(report.parent) in grade["args"][0]
    assert grade["securityContext"]["runAsUser"] == 0
    assert set(grade["securityContext"]["capabilities"]["add"]) <= GRADER_CAPABILITIES
    publish_mounts = {m["name"]: m for m in publish["volumeMounts"]}
    assert publish_mounts[report_mount["name"]]["readOnly"] is True and set(publish_mounts) & results
    assert "runAsUser" not in publish["securityContext"] and "add" not in publish["securityContext"]["capabilities"]
    script = publish["args"][0]
    assert "shard-${JOB_COMPLETION_INDEX}.csv" in script and '[ -L "$report" ]' in script and "stat -c %s" in script


def test_every_kubernetes_container_is_unprivileged_and_the_pods_have_no_network():
    shards_job, merge_job, documents = kubernetes_documents()
    for job in (shards_job, merge_job):
        pod = job["spec"]["template"]["spec"]
        assert pod["automountServiceAccountToken"] is False and pod["enableServiceLinks"] is False
        for container in containers(pod):
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False and context["readOnlyRootFilesystem"] is True
            assert context["capabilities"]["drop"] == ["ALL"]
            assert context.get("runAsUser", 65534) in (0, 65534)
    (policy,) = (d for d in documents if d["kind"] == "NetworkPolicy")
    labels = shards_job["spec"]["template"]["metadata"]["labels"]
    assert merge_job["spec"]["template"]["metadata"]["labels"] == labels
    assert policy["spec"]["podSelector"]["matchLabels"] == labels
    assert sorted(policy["spec"]["policyTypes"]) == ["Egress", "Ingress"] and "egress" not in policy["spec"]


def test_the_merge_reads_only_the_published_shard_reports():
    _, merge_job, _ = kubernetes_documents()
    merge = accepted(normalised(grade_commands(merge_job["spec"]["template"]["spec"]["containers"][0]["args"])[0], 4))
    assert merge.merge == [Path("results/shards/shard-*.csv")]


def test_the_ci_matrix_runs_one_job_per_shard_uploads_each_csv_and_merges_them():
    jobs = workflow()["jobs"]
    grade, merge = jobs["grade"], jobs["merge"]
    shards = len(grade["strategy"]["matrix"]["shard"])
    assert grade["strategy"]["matrix"]["shard"] == list(range(shards)) and merge["needs"] == "grade"
    runs = [step.get("run", "") for step in grade["steps"]] + [step.get("run", "") for step in merge["steps"]]
    commands = grade_commands(runs)
    assert [normalised(c, shards) for c in commands] == guide_commands()
    uploads = [s for s in grade["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert [u["with"]["path"] for u in uploads] == ["results/shards/shard-${{ matrix.shard }}.csv"]
    downloads = [s for s in merge["steps"] if s.get("uses", "").startswith("actions/download-artifact@")]
    assert [d["with"] for d in downloads] == [{"pattern": "shard-*", "path": "results/shards", "merge-multiple": True}]


def test_on_the_runner_the_grader_is_root_the_results_folder_root_s_and_leftovers_end_before_the_upload():
    steps = workflow()["jobs"]["grade"]["steps"]
    grading = next(n for n, s in enumerate(steps) if "-m dpcourse grade" in s.get("run", ""))
    assert steps[grading]["env"] == {"SHARD": "${{ matrix.shard }}"}
    lines = steps[grading]["run"].splitlines()
    assert lines[-1].startswith("sudo .venv/bin/python -m dpcourse grade ")
    assert "sudo install -d -o root -g root -m 0755 results results/shards" in lines
    assert any(line.startswith("sudo -u nobody ") and "exit 1" in line for line in lines)
    kill = next(n for n, s in enumerate(steps) if "pkill -KILL -u nobody" in s.get("run", ""))
    upload = next(n for n, s in enumerate(steps) if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert grading < kill < upload


@pytest.mark.parametrize("path, num_checkouts", [(WORKFLOW, 2), (WORKFLOW.with_name("pages.yml"), 1)])
def test_every_action_is_pinned_to_a_commit_and_no_checkout_keeps_credentials(path, num_checkouts):
    text = path.read_text()
    uses = [line.strip() for line in text.splitlines() if re.match(r"\s*(- )?uses:", line)]
    pinned = [u for u in uses if re.fullmatch(r"(- )?uses: actions/[\w-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+", u)]
    assert uses and pinned == uses
    steps = [step for job in yaml.safe_load(text)["jobs"].values() for step in job["steps"]]
    checkouts = [s for s in steps if s.get("uses", "").startswith("actions/checkout@")]
    assert len(checkouts) == num_checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts)


def test_the_workflow_token_gets_only_read_permissions_where_needed():
    flow = workflow()
    assert flow["permissions"] == {}
    assert flow["jobs"]["grade"]["permissions"] == {"contents": "read", "actions": "read"}
    assert flow["jobs"]["merge"]["permissions"] == {"contents": "read"}


@pytest.mark.parametrize("variable", ["HOME", "MPLCONFIGDIR"])
def test_the_image_gives_home_and_matplotlib_a_folder_the_pods_can_write(variable):
    lines = (ROOT / "deploy" / "Dockerfile").read_text().splitlines()
    assert lines[-1].startswith("USER 65534")
    env = dict(item.split("=", 1) for line in lines if line.startswith("ENV ") for item in shlex.split(line[4:]))
    shards_job, merge_job, _ = kubernetes_documents()
    for job in (shards_job, merge_job):
        pod = job["spec"]["template"]["spec"]
        emptydirs = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
        for container in containers(pod):
            if "python" in container["args"][0]:
                writable = [m["mountPath"] for m in container["volumeMounts"] if m["name"] in emptydirs]
                assert any(Path(env[variable]).is_relative_to(path) for path in writable), container["name"]
