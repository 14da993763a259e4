"""Probing torch autograd for ``tools/gen_torch_ops.py``, in small modules.

* ``specs``: placeholders for example tensors and modules, built fresh on the probe device.
* ``recipes``: the hand-written probing plan (which arguments to try for which op).
* ``graph``: reading an autograd graph (saved tensors, storage aliasing, writes).
* ``params``: positional parameter names from Python signatures or aten schemas.
* ``probes``: one call or one module forward, and what it revealed.
* ``units``: the probes as named units (``function:torch.relu``, ``module:torch.nn.GRU``)
  and the table assembled from their results.
* ``isolate``: running units in subprocess batches, so that a crash loses one probe.

The package imports only torch and the standard library.
"""
