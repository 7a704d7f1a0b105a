# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# One BLAS thread per process: MPI ranks share two cores (see MPI_NOTES.md).
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1

.PHONY: demo test lint bench soak clean notebooks notebooks-build docs gpu-check

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[test,mpi,examples,bench,fast]"
	touch $@

# The main job: 2-rank DDP training on scikit-learn's bundled digits data.
demo: $(VENV)/.installed
	$(VENV)/bin/mpiexec -n 2 $(PY) examples/train_ddp.py

lint: $(VENV)/.installed
	$(PY) -m ruff check .

# CuPy for tests/minigrad/test_cupy_api_names.py alone (its API imports without a GPU), outside the virtualenv's
# packages: minigrad imports CuPy whenever it can, and the other tests expect a CPU-only install.
CUPY_API := $(VENV)/cupy-api
$(CUPY_API)/.installed: | $(PY)
	$(PY) -m pip install --quiet --no-deps --target $(CUPY_API) "cupy-cuda12x>=14,<15" "cuda-pathfinder>=1.3.4,<2"
	touch $@

test: $(VENV)/.installed $(CUPY_API)/.installed lint
	$(PY) -m pytest -q

# The teaching notebooks, run headless with their assertions (`make test` runs them too, as tests/).
notebooks: $(VENV)/.installed
	$(PY) -m pytest -q tests/test_notebooks.py

# Rebuild examples/notebooks/*.ipynb after editing their sources (examples/notebooks/sources/*.py).
notebooks-build: $(VENV)/.installed
	$(PY) examples/notebooks/build.py

# The API reference, HTML from the docstrings, in build/docs/ (open build/docs/index.html). Every module is
# named: pdoc follows a package's __all__ and would skip the submodules it leaves out (minigrad.viz, ...);
# -W silences its note that a module named this way was already reached through its package.
docs: $(VENV)/.installed
	$(PY) -W "ignore:The module specification" -m pdoc --docformat google --output-directory build/docs \
		$$(find minigrad minigrad_dist -name '*.py' ! -name '_[!_]*' | sort)

# Benchmarks compare with PyTorch; OPENBLAS_CORETYPE slows a current NumPy (see env notes).
bench: $(VENV)/.installed
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/bench_engine.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/bench_ddp.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/bench_rpc.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/bench_models.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/bench_dataloader.py

# On a machine with a GPU: the CUDA cases of the test suite (the "cuda" device parameter, test_names' needs_gpu),
# then the GPU benchmark, DDP included (staged through host memory vs CUDA-aware MPI where the MPI library is).
# Fails, saying why, where CuPy sees no GPU. GPU_PY: a Python that has CuPy and a CUDA PyTorch, if not the venv's.
GPU_PY ?= $(PY)
GPU_TESTS ?= tests
gpu-check: $(if $(filter $(PY),$(GPU_PY)),$(VENV)/.installed)
	@$(GPU_PY) -c "from minigrad import backend; import sys; r = backend.cuda_unavailable_reason(); \
		sys.exit(f'gpu-check needs a usable GPU: {r}') if r else print('gpu-check: CUDA devices:', backend.cuda_device_count())"
	$(GPU_PY) -m pytest -q -k "cuda or gpu" -p no:cacheprovider $(GPU_TESTS)
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=$(CURDIR)$${PYTHONPATH:+:$$PYTHONPATH} $(GPU_PY) benchmarks/bench_gpu.py \
		--quick --ddp --out build/gpu-check.json

# Long runs that must keep memory and object counts flat (2000 DDP steps, 2000 contexts).
soak: $(VENV)/.installed
	$(PY) benchmarks/soak.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache
