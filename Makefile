# Every target creates or reuses .venv by itself: a fresh clone needs nothing else.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: demo test pyshacl-suites test-browser bench-viewer test-wheel test-endpoint test-virtuoso test-rdflib-endpoint soak check bench bench-endpoint bench-scale bench-validate bench-secrets bench-mcp eval eval-mining clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $@

demo: $(STAMP)
	$(VENV)/bin/ontoloom demo

test: $(STAMP)
	$(PY) -m pytest -n 2

# pySHACL's own suites (DASH test cases, its data-driven regression tests), from the sdist of
# the pySHACL installed here, unpacked under bench/.peers/ for tests/test_dash_suite.py,
# tests/test_pyshacl_cases.py and tests/test_pyshacl_issue_tests.py.
pyshacl-suites: $(STAMP)
	$(PY) bench/peers.py pyshacl-suites

# The 3D view in Debian's Chromium on software WebGL (SwiftShader), the example and a 2.5k-object
# graph: about a minute on 2 shared cores, so not part of `make test` (the 2D browser tests are).
test-browser: $(STAMP)
	$(PY) -m pytest -m browser3d tests/test_view_browser.py

# Both drawings of the example instance scaled to 1k objects/3k relations and 10k/30k, in headless
# Chromium: time to first frame, frames per second while the layout runs, after it settles and
# while dragged (BENCH_ARGS="--sizes 10000x30000 --drawings 3d" for fewer rows).
bench-viewer: $(STAMP)
	$(PY) bench/viewer_bench.py $(BENCH_ARGS)

# Builds the wheel, installs it into a fresh venv (dependencies from pip's configured index)
# and runs `ontoloom demo` from it: about a minute, so not part of `make test`.
test-wheel: $(STAMP)
	$(PY) -m pytest -m wheel tests/test_wheel.py

# The endpoint tests over `oxigraph serve` without a union default graph (the `oxigraph_named`
# run, left out of `make test`), then the core suites again with every test instance's graph in
# a real `oxigraph serve`.
test-endpoint: $(STAMP)
	$(PY) -m pytest -n 2 -m oxigraph_named tests
	ONTOLOOM_TEST_BACKEND=oxigraph $(PY) -m pytest -n 2 tests/test_cli.py tests/test_write_path.py \
		tests/test_audit.py tests/test_records.py tests/test_proposals.py tests/test_mcp.py \
		tests/test_differential.py tests/test_interchange.py tests/test_search.py

# Virtuoso 7 (Debian virtuoso-opensource-7): the endpoint tests' Virtuoso runs, then the core
# suites with every test instance's graph in a real Virtuoso (tests/README.md lists what does
# not pass there, and why).
VIRTUOSO_SUITES := tests/test_write_path.py tests/test_audit.py tests/test_differential.py \
	tests/test_interchange.py tests/test_search.py tests/test_records.py tests/test_proposals.py \
	tests/test_cli.py tests/test_mcp.py
test-virtuoso: $(STAMP)
	$(PY) -m pytest -n 2 -m virtuoso tests/test_endpoint_backend.py tests/test_endpoint_faults.py \
		tests/test_endpoint_answers.py
	ONTOLOOM_TEST_BACKEND=virtuoso $(PY) -m pytest -n 2 $(VIRTUOSO_SUITES)

# rdflib-endpoint (PyPI, the engines extra): the same answers as the embedded store, or the
# gaps init names (tests/test_endpoint_answers.py); ~11 min on 2 cores (rdflib parses slowly).
test-rdflib-endpoint: $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,engines]'
	$(PY) -m pytest -m rdflib_endpoint tests/test_endpoint_answers.py

# The reliability suite at full scale (tests/reliability: concurrent writers, SIGKILL, fuzzing),
# the generated differential tests with more, fresh examples, and the property tests that
# `make test` runs with fewer examples (scale() in tests/reliability/plugin.py) at full count;
# ends with a table.
SOAK_SUITES := tests/reliability tests/test_differential_generated.py \
	tests/test_differential_intervals.py tests/test_direct.py tests/test_native.py
soak: $(STAMP)
	ONTOLOOM_SOAK=1 ONTOLOOM_HYPOTHESIS_PROFILE=soak ONTOLOOM_DIFFERENTIAL_EXAMPLES=200 \
		$(PY) -m pytest -n 2 $(SOAK_SUITES)

check: $(STAMP)
	$(VENV)/bin/ruff check src tests bench eval
	$(VENV)/bin/ruff format --check src tests bench eval
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports  # the floors of README "Architecture", function-level imports too

# One section: make bench BENCH_ARGS="--only endpoint" (bench/run.py --help lists them).
bench: $(STAMP)
	$(PY) bench/run.py $(BENCH_ARGS)

# Scale-out on SPARQL stores (bench/endpoint_bench.py): disjoint creates by 1, 2, 4 and 8
# gateways (each a process with its own data dir) on oxigraph serve and Virtuoso 7 (when
# installed), the same processes on one embedded data dir, writes/s and the ratio to one
# gateway; then p50 of a create, a traverse and a search at 1k entities. A few minutes.
bench-endpoint: $(STAMP)
	$(PY) bench/endpoint_bench.py $(BENCH_ARGS)

# A validated import beside pyoxigraph's raw bulk load of the same file, peak RSS beside each
# time, then export, reindex, create p50, search p95 and prompt hook p50 on the imported
# instance: make bench-scale BENCH_ARGS="--million" adds the 1M-entity rows (bench/scale.py --help).
bench-scale: $(STAMP)
	$(PY) bench/scale.py $(BENCH_ARGS)

# `ontoloom validate` beside pySHACL, pyshacl-turbo, shacl, shacl-rust and pyrudof, each in a
# fresh process, interleaved: make bench-validate BENCH_ARGS="--million" adds the 1M row,
# BENCH_ARGS="--only dcat --dcat 40" runs only a smaller DCAT-AP 3.0.0 row (400 by default).
bench-validate: $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,peers]'
	$(PY) bench/validate_bench.py $(BENCH_ARGS)

# Precision and recall of the secret refusal through every door (API, import, CLI, MCP, HTTP,
# rebuild), beside detect-secrets on the same seeded corpus: make bench-secrets BENCH_ARGS="--quick".
bench-secrets: $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,peers]'
	$(PY) bench/secrets_bench.py $(BENCH_ARGS)

# MCP servers over stdio, side by side; peers are installed under bench/.peers/ on first use.
bench-mcp: $(STAMP)
	$(PY) bench/mcp_bench.py

# The prompt hook scored on a labelled prompt set (eval/hook_prompts.json): precision, recall,
# quiet rate and tokens injected, for the tuning part, the held-out part and all prompts.
eval: $(STAMP)
	$(PY) eval/hook_eval.py

# Conversation mining scored on shipped fixtures with a canned extractor answer (no model).
eval-mining: $(STAMP)
	$(PY) bench/eval_mining.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
