"""What the grading sandbox costs: ``txcourse grade`` with and without bubblewrap, and with the probes, side by side.

Builds 20 week-2 submissions (by default: 14 correct, 7 per framework; 4 hostile ones that, before
their correct solution, delete ``../../../gradebook.db`` and ``../../../source``, try to read the
solutions and the other submissions, write outside their workspace and fork a process that outlives
them (nothing that would break the other submissions when unconfined: that is the sandbox's job, tested
by tests/course/test_grading_sandbox.py); one that
calls ``os._exit(1)``; one correct notebook under a near-miss name), grades them with ``--jobs 2``
in the sandbox and with ``--no-sandbox`` (alternating, ``--repeats`` times each, the same
submissions), and in the sandbox with the lab's probes (the verdict outside the student's process, a
second sandboxed run of each notebook: txcourse/course/grading/probes.py), and prints seconds per notebook,
notebooks per minute, the ratio sandbox / unconfined (target <= 1.3x) and the ratio with probes / sandbox
alone (target <= 1.5x, issue 21), and checks that every correct submission got full marks. No 20 GB
allocation and no endless loop here: unconfined, the first would hit the machine and the second
only measures the cell timeout.

    python benchmarks/grading_sandbox.py [--notebooks 20] [--jobs 2] [--repeats 1] [--lab week2_positional]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from txcourse.course import grading  # noqa: E402
from txcourse.registry import FRAMEWORKS  # noqa: E402

MARKERS = re.compile(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$", re.MULTILINE)
HOSTILE = r"""
import os, shutil, subprocess, sys
for rel in ("../../../gradebook.db", "../../../source"):  # its own workspace's: unconfined it can only hurt itself
    try:
        (shutil.rmtree if os.path.isdir(rel) else os.remove)(rel)
    except OSError:
        pass
for path in {read!r}:
    try:
        print(os.listdir(path) if os.path.isdir(path) else open(path, "rb").read()[:2000])
    except OSError as error:
        print("cannot read", path, type(error).__name__)
for folder in {write!r}:
    try:
        open(os.path.join(folder, "pwned.txt"), "w").write("x")
    except OSError as error:
        print("cannot write", folder, type(error).__name__)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True)
"""


def hardware() -> str:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        "unknown CPU",
    )
    mem = int(next(line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal"))) / 2**20
    return f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB; load average {' '.join(open('/proc/loadavg').read().split()[:3])}"


def build(root: Path, lab: str, count: int, probes: bool = False) -> tuple[Path, Path, dict[str, str]]:
    """A course copy (with the lab's probes if ``probes``) and ``count`` submissions; returns (labs,
    submissions, student -> kind)."""
    import nbformat

    labs = root / "labs"
    (labs / "source").mkdir(parents=True)
    shutil.copy(ROOT / "labs" / "nbgrader_config.py", labs / "nbgrader_config.py")
    if probes:
        (labs / "probes").mkdir()
        shutil.copy(ROOT / "labs" / "probes" / f"{lab}.json", labs / "probes" / f"{lab}.json")
    shutil.copytree(ROOT / "labs" / "source" / lab, labs / "source" / lab)
    subs = root / "subs"
    kinds = {}
    plan = ["hostile", "hostile", "hostile", "hostile", "crash", "nearmiss"]
    plan += ["correct"] * max(0, count - len(plan))
    for i, kind in enumerate(plan[:count]):
        fw = FRAMEWORKS[i % 2]
        student = f"s{i:02d}_{kind}"
        name = f"{lab}_{fw}"
        source = nbformat.read(labs / "source" / lab / f"{name}.ipynb", as_version=4)
        nb = nbformat.from_dict(source)
        for cell in nb.cells:
            cell.source = MARKERS.sub("", cell.source)
        ids = [c.get("id") for c in nb.cells]
        if kind == "hostile":
            code = HOSTILE.format(
                read=[str(labs / "source" / lab), str(subs)], write=[str(labs), str(subs), tempfile.gettempdir()]
            )
            cell = nb.cells[ids.index(next(i for i in ids if i and i.startswith("positional_encoding")))]
            cell.source = code + "\n" + cell.source
        elif kind == "crash":
            nb.cells[ids.index("worked_table")].source = "import os\nos._exit(1)"
        (subs / student).mkdir(parents=True)
        filename = f"{name} (1).ipynb" if kind == "nearmiss" else f"{name}.ipynb"
        nbformat.write(source if kind == "correct" else nb, subs / student / filename)
        kinds[student] = kind
    return labs, subs, kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each mode, alternating")
    parser.add_argument("--lab", default="week2_positional")
    parser.add_argument("--cell-timeout", type=int, default=120)
    args = parser.parse_args()
    print(hardware())
    modes = ("no sandbox", "sandbox", "sandbox + probes")
    results: dict[str, list[float]] = {mode: [] for mode in modes}
    problems = []
    for repeat in range(args.repeats):
        for mode in modes:
            with tempfile.TemporaryDirectory(prefix="txb-") as tmp:
                labs, subs, kinds = build(Path(tmp), args.lab, args.notebooks, probes=mode.endswith("probes"))
                start = time.perf_counter()
                rows = grading.grade_submissions(
                    subs,
                    args.lab,
                    Path(tmp) / "grades.csv",
                    timeout=args.cell_timeout,
                    labs_dir=labs,
                    jobs=args.jobs,
                    sandbox=mode != "no sandbox",
                    verbose=False,
                )
                seconds = time.perf_counter() - start
                results[mode].append(seconds)
                graded = [r for r in rows if r["status"] != "missing"]
                for r in graded:
                    if kinds[r["student"]] in ("correct", "nearmiss") and r["score"] != r["max_score"]:
                        problems.append(
                            f"{mode}: correct submission {r['student']} {r['notebook']} got "
                            f"{r['score']}/{r['max_score']} ({r['status']})"
                        )
                statuses = sorted({f"{kinds[r['student']]}: {r['status'][:60]} {r['score']:g}" for r in graded})
                print(
                    f"run {repeat + 1}, {mode:<16}: {len(graded)} notebooks in {seconds:6.1f} s "
                    f"({seconds / len(graded):.2f} s per notebook, load {open('/proc/loadavg').read().split()[0]}); "
                    + "; ".join(statuses),
                    flush=True,
                )
    n = args.notebooks
    print(f"\n{args.lab}, {n} notebooks, --jobs {args.jobs} (median of {args.repeats})")
    print("| mode | s per notebook | notebooks per minute | time vs no sandbox | target |")
    print("| --- | --- | --- | --- | --- |")
    base, boxed = statistics.median(results["no sandbox"]), statistics.median(results["sandbox"])
    for mode in modes:
        med = statistics.median(results[mode])
        target = {
            "sandbox": "<= 1.3x no sandbox: " + ("met" if med / base <= 1.3 else "NOT met"),
            "sandbox + probes": f"<= 1.5x sandbox: {med / boxed:.2f}x, " + ("met" if med / boxed <= 1.5 else "NOT met"),
        }.get(mode, "")
        print(f"| {mode} | {med / n:.2f} | {60 * n / med:.1f} | {med / base:.2f}x | {target} |")
    print(f"load average after: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    for problem in problems:
        print("PROBLEM:", problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
