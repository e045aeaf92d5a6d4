# pavlovlab workshop settings for The Littlest JupyterHub (TLJH).
# deploy/tljh/setup.sh copies this file to /opt/tljh/config/jupyterhub_config.d/pavlovlab.py;
# `tljh-config reload hub` applies it. Plain JupyterHub configuration, read after TLJH's own.

# One thread per learner: torch, NumPy's BLAS and OpenMP otherwise start one thread per core in every
# kernel, and 30 kernels on an 8-core VM then fight over the cores (benchmarks/hub.py measures the cost).
_THREADS = "1"
c.Spawner.environment.update(  # noqa: F821 - `c` is the config object JupyterHub passes in
    {
        "OMP_NUM_THREADS": _THREADS,
        "MKL_NUM_THREADS": _THREADS,
        "OPENBLAS_NUM_THREADS": _THREADS,
        "NUMEXPR_NUM_THREADS": _THREADS,
        "VECLIB_MAXIMUM_THREADS": _THREADS,
    }
)

# Open JupyterLab (the course uses its widgets and collapsed solution cells).
c.Spawner.default_url = "/lab"  # noqa: F821 (JupyterHub defines c)

# 30 servers starting at the same minute on a small VM: give each one time (the default is 60 s).
c.Spawner.start_timeout = 300  # noqa: F821 (JupyterHub defines c)
c.Spawner.http_timeout = 180  # noqa: F821 (JupyterHub defines c)
