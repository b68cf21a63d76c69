# Two commands set everything up on a fresh machine: `make docs` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: docs docs-strict test check-generated verify notebooks grade gradescope release bench scan demo fuzz clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
	  echo "error: $(PYTHON) was not found. minidynamo targets CPython 3.11:"; \
	  echo "       install Python 3.11 (e.g. 'pyenv install 3.11' or your OS package python3.11),"; \
	  echo "       or point make at it: make test PYTHON=/path/to/python3.11"; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { \
	  echo "error: $(PYTHON) is not Python 3.11; minidynamo's bytecode layer targets 3.11 exactly."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# Build strictly, then serve the course site on http://127.0.0.1:8000
docs: $(STAMP)
	$(PY) -m mkdocs build --strict
	$(PY) -m mkdocs serve -a 127.0.0.1:8000

docs-strict: $(STAMP)
	$(PY) -m mkdocs build --strict --site-dir site

# Every check: package tests, generated files fresh, exercise verification, docs, notebooks,
# the student edition and the Gradescope package (each run on the solutions and the stubs;
# CHECK_CHAPTERS="ch02 ch06" limits those two to some chapters, `make release` and
# `make gradescope` check them all).
CHECK_CHAPTERS ?=
# The site is built first: the browser test opens that build (MINIDYNAMO_BUILT_SITE)
# instead of building it again. pytest runs on up to four processes (pytest-xdist).
test: $(STAMP)
	$(PY) -m mkdocs build --strict --site-dir site
	MINIDYNAMO_BUILT_SITE=site $(PY) -m pytest tests -q -n auto --maxprocesses 4
	$(PY) -m course check
	$(PY) -m course verify
	$(PY) -m course notebooks --check --execute
	rm -rf dist/check
	$(PY) -m course release --out dist/check/student-edition --check $(CHECK_CHAPTERS)
	$(PY) -m course package gradescope $(CHECK_CHAPTERS) --check \
	    --out dist/check/gradescope-autograder.zip

# Headless Chromium for tests/docs/test_browser.py: Debian's packages, installed when
# missing if make runs as root; otherwise (or if apt-get fails) that test skips and says why.
.PHONY: browser
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } \
	      || echo "warning: apt-get could not install chromium; the browser test will skip"; \
	  else echo "note: chromium is missing and make is not root; the browser test will skip"; fi; }

test: browser

check-generated: $(STAMP)
	$(PY) -m course check

verify: $(STAMP)
	$(PY) -m course verify

notebooks: $(STAMP)
	$(PY) -m course notebooks --execute

grade: $(STAMP)
	$(PY) -m course grade --impl student --out grades

gradescope: $(STAMP)
	$(PY) -m course package gradescope --out dist/gradescope-autograder.zip --check

release: $(STAMP)
	rm -rf dist/student-edition
	$(PY) -m course release --out dist/student-edition --check

# Mutation testing of the graded tests: every task's mutants against its tests (minutes;
# `make test` only checks the committed records, exercises/chNN/mutants.toml, are fresh).
.PHONY: mutants
mutants: $(STAMP)
	$(PY) -m course mutants

bench: $(STAMP)
	for bench in benchmarks/bench_*.py; do $(PY) $$bench || exit 1; done

# The differential fuzzer at scale (`make test` runs 120 programs of it).
FUZZ_COUNT ?= 10000
fuzz: $(STAMP)
	$(PY) -m minidynamo.fuzz --count $(FUZZ_COUNT) --seed 0 --jobs 2 --out fuzz-failures

scan: $(STAMP)
	$(PY) -m minidynamo.scan $(TARGET)

demo: $(STAMP)
	$(PY) examples/demo.py

clean:
	rm -rf $(VENV) site grades
