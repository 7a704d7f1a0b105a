"""Installs the dual-run import switch in every Python process of a minigrad run (spawned ranks too).

The runner puts this folder on PYTHONPATH and sets DUALRUN_TORCH=minigrad;
Python imports ``sitecustomize`` at start-up, so ranks started by
``mp.spawn`` (through mpiexec) resolve ``import torch`` to minigrad as the
parent does.
"""

import os

if os.environ.get("DUALRUN_TORCH") == "minigrad":
    from tests.dualrun import torch_alias

    torch_alias.install()
