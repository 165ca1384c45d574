"""The batch-grading recipes in deploy/ (a Kubernetes Indexed Job, a CI matrix workflow): their structure,
and that the commands they run are the README's "Grading at scale" commands, which the grader's own
command line accepts."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest
import yaml

from dpcourse.classroom.cli import add_grade_command

ROOT = Path(__file__).resolve().parent.parent
SHARD_INDEX = {"${JOB_COMPLETION_INDEX}": "I", "${{ matrix.shard }}": "I"}


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("### Grading at scale", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in re.findall(r"^(python -m dpcourse grade .*)$", section, flags=re.M)]


def normalised(command: str, shards: int) -> str:
    for placeholder, letter in SHARD_INDEX.items():
        command = command.replace(placeholder, letter)
    command = command.replace(f"/{shards} ", "/N ").replace(".venv/bin/python ", "python ")
    return " ".join(command.split())


def grade_commands(texts: list[str]) -> list[str]:
    return [t.strip() for text in texts for t in text.splitlines() if "-m dpcourse grade" in t]


def accepted(command: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_grade_command(parser.add_subparsers(dest="command"))
    argv = shlex.split(command.replace("I/N", "0/4").replace("-I.", "-0."))
    return parser.parse_args(argv[argv.index("dpcourse") + 1 :])


def test_the_readme_has_the_shard_and_merge_commands_and_the_grader_accepts_them():
    commands = readme_commands()
    assert len(commands) == 2
    shard, merge = (accepted(c) for c in commands)
    assert shard.sandbox == "none" and shard.shard == (0, 4) and shard.report.name == "shard-0.csv"
    assert merge.merge and merge.report.name == "grades.csv"


def test_the_kubernetes_job_is_indexed_one_pod_per_shard_unprivileged_and_runs_the_readmes_commands():
    shards_job, merge_job = yaml.safe_load_all((ROOT / "deploy" / "kubernetes" / "grade-job.yaml").read_text())
    assert shards_job["kind"] == merge_job["kind"] == "Job"
    spec = shards_job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"]
    shards = spec["completions"]
    pod = spec["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False and pod["securityContext"]["runAsNonRoot"] is True
    container = pod["containers"][0]
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert {m["mountPath"]: m.get("readOnly", False) for m in container["volumeMounts"]}["/course/submissions"]
    commands = grade_commands(container["args"]) + grade_commands(
        merge_job["spec"]["template"]["spec"]["containers"][0]["args"]
    )
    assert [normalised(c, shards) for c in commands] == readme_commands()
    assert f"--shard ${{JOB_COMPLETION_INDEX}}/{shards} " in commands[0]


def test_the_ci_matrix_runs_one_job_per_shard_uploads_each_csv_and_merges_them():
    workflow = yaml.safe_load((ROOT / "deploy" / "github" / "grade.yml").read_text())
    grade, merge = workflow["jobs"]["grade"], workflow["jobs"]["merge"]
    shards = len(grade["strategy"]["matrix"]["shard"])
    assert grade["strategy"]["matrix"]["shard"] == list(range(shards)) and merge["needs"] == "grade"
    runs = [step.get("run", "") for step in grade["steps"]] + [step.get("run", "") for step in merge["steps"]]
    commands = grade_commands(runs)
    assert [normalised(c, shards) for c in commands] == readme_commands()
    uploads = [s for s in grade["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and uploads[0]["with"]["path"] == "results/shard-${{ matrix.shard }}.csv"


@pytest.mark.parametrize("path", ["deploy/Dockerfile"])
def test_the_image_runs_submissions_as_an_unprivileged_user(path):
    lines = (ROOT / path).read_text().splitlines()
    assert lines[-1].startswith("USER 65534")
