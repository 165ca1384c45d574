"""Run benchmarks: ``python -m benchmarks [bench_laplace ...]`` (all ``bench_*.py`` by default).

Each module's section is written to ``benchmarks/results/<module>.md``; ``RESULTS.md`` is
then rebuilt from every section on disk, so running one topic keeps the others' results.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from ._harness import RESULTS_DIR, machine_line

HERE = Path(__file__).parent


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem for p in HERE.glob("bench_*.py"))
    RESULTS_DIR.mkdir(exist_ok=True)
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"running {name} ...", flush=True)
        section = module.run()
        text = section.markdown()
        (RESULTS_DIR / f"{name}.md").write_text(f"_{machine_line()}_\n\n{text}")
        print(text)
    parts = [p.read_text() for p in sorted(RESULTS_DIR.glob("bench_*.md"))]
    header = "# Benchmark results\n\nWritten by `make bench`; ratios are against a baseline timed in the same run.\n\n"
    (HERE / "RESULTS.md").write_text(header + "\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
