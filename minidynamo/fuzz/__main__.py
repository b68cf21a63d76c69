"""`python -m minidynamo.fuzz`: run a fuzzing campaign and print what it found (chapter 7).

    python -m minidynamo.fuzz --count 60 --seed 0             # one of the two campaigns `make test` runs
    python -m minidynamo.fuzz --count 10000 --jobs 2 --out fuzz-failures   # `make fuzz`

Each job is a process of its own with its own seed (seed, seed + 1000, ...); the
summary adds them up. Every minimal failing program is printed as a regression test
(and written to `--out`, one file each). The exit status is 1 when any program gave
a wrong output or an internal error, or was invalid.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import time

JOB_SEED_STRIDE = 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minidynamo.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=300, help="programs to run")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--jobs", type=int, default=1, help="processes to run in parallel")
    parser.add_argument("--no-shrink", action="store_true", help="report failures unshrunk")
    parser.add_argument("--max-failures", type=int, help="stop after this many failures")
    parser.add_argument("--out", type=pathlib.Path, help="write each failure's test here")
    parser.add_argument("--json", type=pathlib.Path, help=argparse.SUPPRESS)  # a job's result
    options = parser.parse_args(argv)
    started = time.perf_counter()
    if options.jobs > 1:
        summary = run_jobs(options)
    else:
        from minidynamo.fuzz.campaign import run_campaign

        summary = run_campaign(options.count, options.seed, shrink=not options.no_shrink,
                               on_verdict=progress(options, started),
                               max_failures=options.max_failures)
    if options.json is not None:  # a job of a parallel run: hand the summary back
        options.json.write_text(json.dumps(to_json(summary)))
        return 0
    return report(summary, options, time.perf_counter() - started)


def progress(options: argparse.Namespace, started: float):
    """A line on stderr every 500 programs (and for each failure): a long run shows life."""
    counts = {"programs": 0, "failed": 0}

    def on_verdict(verdict) -> None:
        counts["programs"] += 1
        counts["failed"] += verdict.failed
        if verdict.failed or counts["programs"] % 500 == 0:
            print(f"[fuzz seed {options.seed}] {counts['programs']} programs, "
                  f"{counts['failed']} failed, {time.perf_counter() - started:.0f} s"
                  + (f": {verdict.kind}" if verdict.failed else ""), file=sys.stderr, flush=True)

    return on_verdict


def run_jobs(options: argparse.Namespace):
    """Split the count over `--jobs` processes; merge their summaries."""
    import tempfile

    from minidynamo.fuzz.campaign import Summary

    counts = [options.count // options.jobs + (job < options.count % options.jobs)
              for job in range(options.jobs)]
    with tempfile.TemporaryDirectory() as folder:
        processes = []
        for job, count in enumerate(counts):
            result = pathlib.Path(folder, f"job{job}.json")
            command = [sys.executable, "-m", "minidynamo.fuzz", "--count", str(count),
                       "--seed", str(options.seed + job * JOB_SEED_STRIDE), "--json", str(result)]
            command += ["--no-shrink"] if options.no_shrink else []
            if options.max_failures is not None:
                command += ["--max-failures", str(options.max_failures)]
            processes.append((subprocess.Popen(command), result))
        summary = Summary()
        for process, result in processes:
            if process.wait() != 0 or not result.exists():
                raise SystemExit(f"a fuzzing job failed (exit status {process.returncode})")
            summary.merge(from_json(json.loads(result.read_text())))
    return summary


def to_json(summary) -> dict:
    def verdict(each):
        return {"source": each.program.source, "change": each.program.change,
                "mutations": each.program.mutations, "kind": each.kind,
                "details": each.details, "graphs": each.graphs,
                "torch_graphs": each.torch_graphs, "pattern": each.pattern,
                "torch_pattern": each.torch_pattern}

    examples = ("failures", "graph_count_examples", "pattern_examples")
    counters = ("verdicts", "graph_counts", "patterns", "pattern_kinds")
    return {"programs": summary.programs, "frames_run_eagerly": summary.frames_run_eagerly,
            **{name: dict(getattr(summary, name)) for name in counters},
            **{name: [verdict(each) for each in getattr(summary, name)] for name in examples}}


def from_json(data: dict):
    import collections

    from minidynamo.fuzz.campaign import Summary
    from minidynamo.fuzz.grammar import Program
    from minidynamo.fuzz.runner import Verdict

    def verdict(each):
        mutations = tuple((call, statement) for call, statement in each["mutations"])
        torch_pattern = each["torch_pattern"] and tuple(each["torch_pattern"])
        return Verdict(Program(each["source"], each["change"], mutations), each["kind"],
                       each["details"], each["graphs"], each["torch_graphs"],
                       pattern=tuple(each["pattern"]), torch_pattern=torch_pattern)

    examples = ("failures", "graph_count_examples", "pattern_examples")
    counters = ("verdicts", "graph_counts", "patterns", "pattern_kinds")
    return Summary(programs=data["programs"], frames_run_eagerly=data["frames_run_eagerly"],
                   **{name: collections.Counter(data[name]) for name in counters},
                   **{name: [verdict(each) for each in data[name]] for name in examples})


def report(summary, options: argparse.Namespace, seconds: float) -> int:
    from minidynamo.fuzz.runner import REGRESSION_TEST_IMPORTS, program_name, regression_test

    for failure in summary.failures:
        print(f"\n# ---- {failure.kind}: minimal program {program_name(failure.program)}")
        print(regression_test(failure))
        if options.out is not None:
            options.out.mkdir(parents=True, exist_ok=True)
            path = options.out / f"test_{program_name(failure.program)}.py"
            path.write_text(REGRESSION_TEST_IMPORTS + "\n\n" + regression_test(failure))
    for example in summary.graph_count_examples[:3]:
        print(f"\n# graph count {example.graphs}, torch.compile {example.torch_graphs}:")
        print(example.program.source.split("\ndef f(", 1)[-1].join(["def f(", ""]))
    for example in summary.pattern_examples[:8]:  # up to two of each kind
        print(f"\n# compile pattern {example.pattern}, torch.compile {example.torch_pattern}"
              f" (change {example.program.change!r}, mutations {example.program.mutations}):")
        print(example.program.source.split("\ndef f(", 1)[-1].join(["def f(", ""]))
    print("\n".join(summary.lines()))
    print(f"time:                  {seconds:.0f} s ({options.jobs} job(s), seed {options.seed})")
    bad = summary.verdicts["wrong"] + summary.verdicts["internal"] + summary.verdicts["invalid"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
