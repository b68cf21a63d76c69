"""A fuzzing campaign: many programs, their verdicts counted, failures shrunk (chapter 7).

Hypothesis draws the programs (`grammar.programs`) and calls `check` on each. While
no program has failed, every verdict is counted, and so is whether minidynamo
compiled in the same calls as torch.compile (its *compile pattern*: not a failure
when it differs, a rate to keep high; each kind of difference is counted). When one
fails (a wrong output or an internal error), Hypothesis shrinks it: it tries smaller
programs drawn from smaller choices and keeps the smallest that still fails the same
way, then calls the test once more with it. That last failing program is the
*minimal* one, kept with its regression test; the campaign then goes on with a new
seed until the requested number of programs has been counted.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import warnings
from typing import Callable

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

from minidynamo.fuzz.grammar import Program, programs
from minidynamo.fuzz.runner import INVALID, Verdict, check

DISAGREES = "torch.compile disagrees with eager"  # no fair test of graphs


class FailingProgram(Exception):
    """Raised inside the Hypothesis test so that it shrinks the program."""


@dataclasses.dataclass
class Summary:
    """The counts a campaign prints, and its minimal failing programs."""

    programs: int = 0
    verdicts: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    frames_run_eagerly: int = 0
    graph_counts: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    failures: list[Verdict] = dataclasses.field(default_factory=list)  # minimal programs
    graph_count_examples: list[Verdict] = dataclasses.field(default_factory=list)
    # compile patterns against torch.compile's: "same", "different", or torch.compile
    # disagrees with eager; each different pair of patterns, and examples of them
    patterns: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    pattern_kinds: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    pattern_examples: list[Verdict] = dataclasses.field(default_factory=list)

    def record(self, verdict: Verdict) -> None:
        self.programs += 1
        self.verdicts[verdict.kind] += 1
        self.frames_run_eagerly += verdict.frames_run_eagerly
        if verdict.kind == INVALID:
            return  # nothing was compiled
        if verdict.torch_graphs is None:
            self.graph_counts[DISAGREES] += 1
            self.patterns[DISAGREES] += 1
            return
        if verdict.torch_graphs == verdict.graphs:
            self.graph_counts["same"] += 1
        else:
            self.graph_counts["different"] += 1
            if len(self.graph_count_examples) < 5:
                self.graph_count_examples.append(verdict)
        if verdict.same_pattern:
            self.patterns["same"] += 1
        else:
            self.patterns["different"] += 1
            self.pattern_kinds[pattern_kind(verdict)] += 1
            self.keep_pattern_example(verdict)

    def merge(self, other: Summary) -> None:
        self.programs += other.programs
        self.verdicts.update(other.verdicts)
        self.frames_run_eagerly += other.frames_run_eagerly
        self.graph_counts.update(other.graph_counts)
        self.failures += other.failures
        self.graph_count_examples += other.graph_count_examples[:5]
        self.patterns.update(other.patterns)
        self.pattern_kinds.update(other.pattern_kinds)
        for example in other.pattern_examples:
            self.keep_pattern_example(example)

    def keep_pattern_example(self, verdict: Verdict) -> None:
        """Keep two examples of each kind of different compile pattern."""
        kind = pattern_kind(verdict)
        if sum(pattern_kind(each) == kind for each in self.pattern_examples) < 2:
            self.pattern_examples.append(verdict)

    @property
    def pattern_agreement(self) -> float | None:
        """The share of programs compared whose compile pattern is torch.compile's."""
        compared = self.patterns["same"] + self.patterns["different"]
        return self.patterns["same"] / compared if compared else None

    def lines(self) -> list[str]:
        count = self.verdicts
        agreement = self.pattern_agreement
        lines = [
            f"programs:              {self.programs}",
            f"wrong outputs:         {count['wrong']}",
            f"internal errors:       {count['internal']}",
            f"invalid programs:      {count['invalid']} (eager raised: a grammar bug)",
            f"frames run eagerly:    {self.frames_run_eagerly}",
            "graph count vs torch.compile (first call): "
            + ", ".join(f"{key} {value}" for key, value in sorted(self.graph_counts.items())),
            "compile pattern vs torch.compile (graphs per call): "
            + ", ".join(f"{key} {value}" for key, value in sorted(self.patterns.items())),
            "pattern agreement:     "
            + ("-" if agreement is None else f"{agreement:.1%} (target 95%)"),
        ]
        lines += [f"  {times} x {kind}" for kind, times in self.pattern_kinds.most_common(8)]
        return lines


def pattern_kind(verdict: Verdict) -> str:
    """`minidynamo (1, 0, 0, 0), torch.compile (1, 0, 1, 0)`: one kind of disagreement."""
    return f"minidynamo {verdict.pattern}, torch.compile {verdict.torch_pattern}"


def run_campaign(count: int, base_seed: int, *, shrink: bool = True,
                 on_verdict: Callable[[Verdict], None] | None = None,
                 max_failures: int | None = None) -> Summary:
    """Count `count` programs from seed `base_seed` on; shrink each failure found; stop
    early once `max_failures` failures are in hand."""
    summary = Summary()
    campaign_seed = base_seed
    while summary.programs < count and len(summary.failures) != max_failures:
        found = one_hypothesis_run(count - summary.programs, campaign_seed, summary,
                                   shrink=shrink, on_verdict=on_verdict)
        if found is None:
            break
        summary.failures.append(found)
        campaign_seed += 1
    return summary


def one_hypothesis_run(budget: int, run_seed: int, summary: Summary, *, shrink: bool,
                       on_verdict: Callable[[Verdict], None] | None) -> Verdict | None:
    """One Hypothesis run: up to `budget` programs; the minimal failure, if any."""
    state: dict = {"shrinking": False, "last_failure": None, "counted": 0}

    def test(program: Program) -> None:
        verdict = check(program, reference=not state["shrinking"])
        if not state["shrinking"]:
            summary.record(verdict)
            state["counted"] += 1
            if on_verdict is not None:
                on_verdict(verdict)
        if verdict.failed:
            state["shrinking"] = True
            state["last_failure"] = verdict
            raise FailingProgram(verdict.kind)

    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    runner = settings(max_examples=budget, database=None, deadline=None, phases=phases,
                      report_multiple_bugs=False, suppress_health_check=list(HealthCheck),
                      print_blob=False, verbosity=Verbosity.quiet)(
        seed(run_seed)(given(programs())(test)))
    with quiet():
        try:
            runner()
        except FailingProgram:
            return state["last_failure"]
    return None  # the budget is spent (or Hypothesis ran out of new programs)


class quiet:
    """Silence minidynamo's graph-break warnings and torch's logs while fuzzing."""

    def __enter__(self) -> None:
        self.level = logging.root.manager.disable
        logging.disable(logging.WARNING)
        self.warnings = warnings.catch_warnings()
        self.warnings.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc_info: object) -> None:
        self.warnings.__exit__(*exc_info)
        logging.disable(self.level)
