"""A differential fuzzer: generated programs, run eagerly, under torch.compile and under
minidynamo, compared (chapter 7, issues 8 and 14).

    python -m minidynamo.fuzz --count 10000 --seed 0 --jobs 2

`program` says what a program is (its source, the module it runs in, what changes
between its four calls), `grammar` writes the programs (a rule table of statements,
drawn through Hypothesis), `runner` runs one program three ways and gives its verdict,
`campaign` counts many, compares compile patterns with torch.compile's and shrinks each
failure to a minimal program, printed as a ready-to-paste regression test.
"""

from minidynamo.fuzz.campaign import Summary, run_campaign
from minidynamo.fuzz.grammar import programs
from minidynamo.fuzz.program import CHANGES, Program
from minidynamo.fuzz.runner import INTERNAL, INVALID, OK, WRONG, Verdict, check, regression_test

__all__ = ["CHANGES", "INTERNAL", "INVALID", "OK", "Program", "Summary", "Verdict", "WRONG",
           "check", "programs", "regression_test", "run_campaign"]
