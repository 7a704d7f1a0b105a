"""Run by test_launch.py: calls spawn at the top level, without the ``if __name__ == "__main__":`` guard.

Each new rank re-imports this script and must refuse to spawn again; the parent reports that error.
"""

import sys

import minigrad_dist.multiprocessing as mp


def work(rank):
    return rank


try:
    mp.spawn(work, nprocs=2)
except mp.ProcessRaisedException as error:
    print("REFUSED:", "if __name__" in str(error) and "RuntimeError" in str(error), flush=True)
    sys.exit(0)
