"""Scan-plus-assemble throughput: minidynamo against TorchDynamo, same run (chapter 1).

Over the standard-library sample the tests use (tests/bytecode/bytecode_corpus.py),
each side turns every code object into instructions and back, with no change in
between:

    minidynamo:  assemble(scan(code), code)
    torch:       torch._dynamo.bytecode_transformation.transform_code_object(
                     code, lambda instructions, code_options: None)

and we print code objects per second, instructions per second and the ratio.
Each side is timed `--repeat` times and the best run is kept. Code objects
that torch's identity transform rejects (if any) are left out of both sides.

    python benchmarks/bench_bytecode.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "bytecode"))

from bytecode_corpus import corpus  # noqa: E402

from minidynamo.bytecode import assemble, scan  # noqa: E402


def minidynamo_round_trip(code):
    return assemble(scan(code), code)


def torch_round_trip_function():
    from torch._dynamo.bytecode_transformation import transform_code_object

    def identity(instructions, code_options):
        return None

    return lambda code: transform_code_object(code, identity)


def accepted_by(round_trip, codes):
    """The code objects a round trip handles without raising, and why it failed on others."""
    accepted, failures = [], Counter()
    for code in codes:
        try:
            round_trip(code)
        except Exception as error:   # noqa: BLE001 - counted and reported, not hidden
            failures[f"{type(error).__name__}: {str(error)[:70]}"] += 1
            continue
        accepted.append(code)
    return accepted, failures


def best_time(round_trip, codes, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for code in codes:
            round_trip(code)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args(argv)
    codes = corpus()
    torch_round_trip = torch_round_trip_function()
    ours, our_failures = accepted_by(minidynamo_round_trip, codes)
    usable, torch_failures = accepted_by(torch_round_trip, ours)
    instructions = sum(len(scan(code)) for code in usable)
    print(f"sample: {len(codes)} code objects from the standard library")
    for name, failures in (("minidynamo", our_failures), ("torch", torch_failures)):
        print(f"  rejected by {name}: {sum(failures.values())}")
        for reason, count in failures.most_common(3):
            print(f"    {count:5} x {reason}")
    print(f"timed: {len(usable)} code objects accepted by both, {instructions} "
          "instructions (EXTENDED_ARG and CACHE excluded)")
    results = {}
    for name, round_trip in (("minidynamo", minidynamo_round_trip), ("torch", torch_round_trip)):
        seconds = best_time(round_trip, usable, options.repeat)
        results[name] = seconds
        print(f"{name:>10}: {seconds:6.2f} s  {len(usable) / seconds:9.0f} code objects/s  "
              f"{instructions / seconds:10.0f} instructions/s")
    ratio = results["torch"] / results["minidynamo"]
    print(f"     ratio: minidynamo is {ratio:.2f}x the speed of torch's identity transform")
    return 0


if __name__ == "__main__":
    sys.exit(main())
