#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image (the only time there is a network).
# It installs Python >= 3.11, the exact pins of requirements.txt and the dpcourse package carried in this zip
# into /autograder/venv, bubblewrap, and the unprivileged user the students' kernels run as when bubblewrap
# cannot (Gradescope's containers usually refuse its namespaces). Nothing is fetched when a submission is graded.
set -euo pipefail

source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${DPCOURSE_AUTOGRADER_ROOT:-/autograder}"
user="${DPCOURSE_UNCONFINED_USER:-dpcourse-student}"
export DEBIAN_FRONTEND=noninteractive

# A final release only: Ubuntu 22.04's python3.11 (jammy-updates) is 3.11.0rc1, which lacks
# sys.set_int_max_str_digits (3.11.0rc2), and the grader's judge process calls it: every exercise would error.
new_enough() {
    "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11) or sys.version_info.releaselevel != "final")' 2>/dev/null
}

find_python() {
    for candidate in python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null && new_enough "$candidate"; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

apt-get update
# Ubuntu 24.04's python3 is 3.12 (python3-venv adds venv and ensurepip); Debian 12's is 3.11. Ubuntu 22.04's is
# 3.10 and its universe's python3.11 a release candidate (refused above): 22.04 and older bases get 3.11 from
# the deadsnakes archive (add-apt-repository asks api.launchpad.net for its key).
python="$(find_python || true)"
if [ -z "$python" ]; then
    apt-get install -y --no-install-recommends python3-venv || true
    python="$(find_python || true)"
fi
if [ -z "$python" ]; then
    apt-get install -y --no-install-recommends python3.11 python3.11-venv || true
    python="$(find_python || true)"
fi
if [ -z "$python" ]; then
    apt-get install -y --no-install-recommends software-properties-common gpg-agent
    add-apt-repository -y ppa:deadsnakes/ppa
    apt-get update
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
    python="$(find_python)"
fi
echo "setup.sh: using $python ($("$python" --version))"

# bubblewrap, for containers that allow its namespaces; run_autograder checks at every run and otherwise
# runs the kernel as $user.
apt-get install -y --no-install-recommends bubblewrap || echo "setup.sh: no bubblewrap package; kernels run as $user"

"$python" -m venv "$root/venv"
"$root/venv/bin/python" -m pip install --no-cache-dir --upgrade pip
"$root/venv/bin/python" -m pip install --no-cache-dir -r "$source_dir/requirements.txt"
"$root/venv/bin/python" -m pip install --no-cache-dir --no-deps "$source_dir/package"
"$root/venv/bin/python" -m pip check

if ! id "$user" >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
fi

# The students' user may run the environment but write nothing of it; the solutions stay root's alone.
chmod 0755 "$root"
chmod -R go-w "$root/venv"
chmod -R a+rX "$root/venv"
chmod -R go-rwx "$source_dir"
"$root/venv/bin/python" -I -c "import dpcourse.classroom.lms.gradescope.autograder; print('setup.sh: dpcourse', dpcourse.__version__)"
