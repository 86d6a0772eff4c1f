# Development tasks. Every target that needs the virtual environment creates it in .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
# --compile-bytecode: every process finds the libraries compiled (as pip leaves them), even where
# PYTHONDONTWRITEBYTECODE keeps Python from caching what it compiles.
UV_INSTALL := $(VENV)/bin/uv --quiet pip install --compile-bytecode --python $(PY)
comma := ,
EXTRAS ?= dev,ray,jupyter,spark,inference,reports,streaming
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
# The voice-activity model's ONNX file comes in silero-vad's wheel, which requires torch; the ONNX
# file needs only onnxruntime, so with the inference extra it is installed without dependencies.
# Its pin is SILERO_VAD in workbench/builtin_models/packages.py, whose error message names it too.
SILERO_VAD := $(shell sed -n 's/^SILERO_VAD = "\(.*\)"$$/\1/p' workbench/builtin_models/packages.py)

.PHONY: venv install java-check browser-deps test test-fast test-cluster test-notebooks lint format benchmark demo media lab build labextension clean clean-venv clean-build

venv: $(PY)

# uv installs the project into the venv: the same releases pip resolves, in a third of the time.
$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install "uv>=0.5"

install: $(STAMP)

# An editable install does not place the wheel's data files, so the JupyterLab extension is linked
# where JupyterLab looks for it (as `jupyter labextension develop` would): a rebuild shows at once.
LABEXTENSIONS := $(VENV)/share/jupyter/labextensions
$(STAMP): pyproject.toml | $(PY)
	$(UV_INSTALL) -e ".[$(EXTRAS)]"
	$(PY) -m compileall -q -j 0 workbench  # the project's own modules: an editable install leaves sources
	$(if $(findstring inference,$(EXTRAS)),$(UV_INSTALL) --no-deps "$(SILERO_VAD)")
	mkdir -p $(LABEXTENSIONS)
	rm -rf $(LABEXTENSIONS)/workbench-jupyterlab
	ln -s $(CURDIR)/workbench/labextension $(LABEXTENSIONS)/workbench-jupyterlab
	touch $@

# Spark 4 needs Java 17 or 21 (conda users get it from environment.yml).
java-check:
	@java -version >/dev/null 2>&1 || { \
		echo "Java 17+ is needed for the Spark engine: sudo apt-get install -y openjdk-17-jre-headless"; \
		exit 1; }

# The browser test drives JupyterLab in Debian's Chromium (never a downloaded browser build).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "Installing Debian's chromium for the browser test"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }

# nbval checks each tutorial cell's output against the one saved in the notebook.
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tutorials/sanitize.cfg

# A worker per core; Spark's and Ray's tests each stay on one (tests/conftest.py), and so do a
# tutorial's cells (tutorials/conftest.py): nbval keeps a notebook's kernel across its cells.
XDIST := -n auto --dist loadgroup

test: install java-check browser-deps
	WORKBENCH_REQUIRE_BROWSER=1 $(PY) -m pytest tests tutorials $(NBVAL) $(XDIST) -p no:cacheprovider -q

# The fast tier: no Spark, Ray, S3 server, kernels, browser or process-killing tests.
FAST := not (spark or ray or s3 or kernel or browser or slow)
test-fast: install
	$(PY) -m pytest tests -m "$(FAST)" $(XDIST) -p no:cacheprovider -q

# The engine suites on real clusters: a Spark standalone master with two workers and a two-node
# Ray cluster, all on 127.0.0.1, with the catalogs on a local S3 server. The test fixtures start
# and stop everything; only tests that use Spark or Ray run (see --cluster in tests/conftest.py).
CLUSTER_SUITES := tests/engines tests/features/test_infer.py tests/core/storage/test_s3.py
test-cluster: install java-check
	$(PY) -m pytest $(CLUSTER_SUITES) --cluster -p no:cacheprovider -q

test-notebooks: install
	$(PY) -m pytest tutorials $(NBVAL) -p no:cacheprovider -q

lint: install
	$(VENV)/bin/ruff check workbench tests benchmarks tools
	$(VENV)/bin/ruff format --check workbench tests benchmarks tools
	$(VENV)/bin/lint-imports

format: install
	$(VENV)/bin/ruff check --fix workbench tests benchmarks tools
	$(VENV)/bin/ruff format workbench tests benchmarks tools

benchmark: install
	$(PY) -m benchmarks.core_bench
	$(PY) -m benchmarks.paired_bench
	$(PY) -m benchmarks.txn_bench
	$(PY) -m benchmarks.ui_bench
	$(PY) -m benchmarks.spark_bench
	$(PY) -m benchmarks.engines_bench

demo: install java-check
	$(PY) -m workbench.demo

# Rewrite the sample files in media/ (deterministic; needs espeak-ng for the speech clips).
media: $(PY)
	$(UV_INSTALL) -e ".[inference]"
	$(PY) media/generate.py

# Local only (127.0.0.1) with a token; root users (common in containers) need --allow-root.
LAB_PORT ?= 8888
lab: install
	@TOKEN=$$($(PY) -c "import secrets; print(secrets.token_hex(16))"); \
	if [ "$$(id -u)" = 0 ]; then ROOT_FLAG=--allow-root; else ROOT_FLAG=; fi; \
	echo "JupyterLab: http://127.0.0.1:$(LAB_PORT)/lab?token=$$TOKEN"; \
	exec $(VENV)/bin/jupyter lab tutorials $$ROOT_FLAG --no-browser --ip=127.0.0.1 \
		--port=$(LAB_PORT) --IdentityProvider.token=$$TOKEN

# The wheel in dist/, built from a clean copy of the sources and checked to hold every file
# under workbench/ (tools/build_wheel.py); it needs only pip (setuptools comes from PyPI).
build: $(PY)
	$(PY) tools/build_wheel.py dist

# Rebuild the JupyterLab extension (labextension/, TypeScript) into workbench/labextension/,
# which is committed: the only target that needs Node.js (20+) and npm.
labextension: install
	$(PY) tools/build_labextension.py

clean-build:
	rm -rf build dist *.egg-info

clean-venv:
	rm -rf $(VENV)

clean: clean-build clean-venv
	rm -rf .pytest_cache .ruff_cache .hypothesis reports
