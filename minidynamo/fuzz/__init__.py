"""A differential fuzzer: generated programs, run eagerly, under torch.compile and under
minidynamo, compared (chapter 7, issue 8).

    python -m minidynamo.fuzz --count 10000 --seed 0 --jobs 2

`grammar` writes the programs (a rule table of statements, drawn through Hypothesis),
`runner` runs one program three ways and gives its verdict, `campaign` counts many and
shrinks each failure to a minimal program, printed as a ready-to-paste regression test.
"""

from minidynamo.fuzz.campaign import Summary, run_campaign
from minidynamo.fuzz.grammar import CHANGES, Program, programs
from minidynamo.fuzz.runner import INTERNAL, INVALID, OK, WRONG, Verdict, check, regression_test

__all__ = ["CHANGES", "INTERNAL", "INVALID", "OK", "Program", "Summary", "Verdict", "WRONG",
           "check", "programs", "regression_test", "run_campaign"]
