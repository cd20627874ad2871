"""``jitgrad.distributed``: data-parallel gradients, fits and training on Dask.

Install with ``pip install 'jitgrad[distributed]'``. The scheduler is Dask's: jitgrad adds the
per-partition work (a loss and its gradient on the worker that holds the partition), the tree
sum on the cluster, and the bookkeeping that makes the result exact (see docs/distributed.md).

- :func:`value_and_grad`, :func:`hvp`: a loss summed over partitions and its derivatives.
- :func:`minimize`: ``jitgrad.scipy.optimize.minimize`` on a partitioned loss.
- :class:`DataParallel`: synchronous data-parallel training of an ``nn.Module``.
- :func:`persist`, :class:`Partitions`: put the data on the workers once.
- :func:`warmup`: compile the kernels on every worker ahead of the first call.
"""
try:
    import distributed as _distributed  # noqa: F401
except ImportError as _err:  # pragma: no cover - exercised without the extra
    raise ImportError("jitgrad.distributed needs Dask's distributed scheduler: "
                      "pip install 'jitgrad[distributed]'") from _err

from ._grad import (CallStats, PartitionError, hvp, minimize, persist, value_and_grad,
                    warmup)
from ._parallel import DataParallel
from ._partitions import Partitions

__all__ = ["CallStats", "DataParallel", "PartitionError", "Partitions", "hvp", "minimize",
           "persist", "value_and_grad", "warmup"]
