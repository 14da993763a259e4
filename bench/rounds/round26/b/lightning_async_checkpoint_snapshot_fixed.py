# label: safe
# why: the fix snapshots every tensor in the checkpoint payload with detach().clone() on the caller thread, so later in-place optimizer steps cannot change what the background save writes.
# source: https://github.com/Lightning-AI/pytorch-lightning/commit/41486e2505
from typing import Any

import torch
from torch import nn

torch.manual_seed(0)

_DISK = {}


class _DeferredExecutor:
    """Stand-in for ThreadPoolExecutor(max_workers=1) whose worker runs late."""

    def __init__(self):
        self._jobs = []

    def submit(self, fn, *args, **kwargs):
        self._jobs.append((fn, args, kwargs))

    def shutdown(self, wait=True):
        for fn, args, kwargs in self._jobs:
            fn(*args, **kwargs)
        self._jobs.clear()


class TorchCheckpointIO:
    def save_checkpoint(self, checkpoint, path, storage_options=None):
        # serialize: copy what the tensors hold *now*
        _DISK.update({path: {k: v.clone() for k, v in checkpoint["state_dict"].items()}})


class AsyncCheckpointIO:
    def __init__(self, checkpoint_io=None):
        self.checkpoint_io = checkpoint_io or TorchCheckpointIO()
        self._executor = _DeferredExecutor()

    def save_checkpoint(self, *args: Any, **kwargs: Any) -> None:
        """Uses the ``ThreadPoolExecutor`` to save the checkpoints using the base ``checkpoint_io``."""

        # snapshot the checkpoint payload on the caller thread to avoid races with parameter mutation
        def _clone_tensor(t: torch.Tensor) -> torch.Tensor:
            # detach to avoid autograd history and clone to take a point-in-time copy
            return t.detach().clone()

        checkpoint = args[0]
        checkpoint = {
            key: ({k: _clone_tensor(v) for k, v in value.items()} if key == "state_dict" else value)
            for key, value in checkpoint.items()
        }
        args = (checkpoint, *args[1:])

        def _save_checkpoint(*args: Any, **kwargs: Any) -> None:
            self.checkpoint_io.save_checkpoint(*args, **kwargs)

        self._executor.submit(_save_checkpoint, *args, **kwargs)

    def teardown(self) -> None:
        self._executor.shutdown(wait=True)


def main():
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    checkpoint_io = AsyncCheckpointIO()
    expected = None
    for step in range(3):
        x = torch.randn(8, 4)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == 1:
            expected = {k: v.detach().clone() for k, v in model.state_dict().items()}
            checkpoint_io.save_checkpoint({"state_dict": model.state_dict(), "global_step": step}, "epoch=0-step=1.ckpt")
    checkpoint_io.teardown()
    saved = _DISK["epoch=0-step=1.ckpt"]
    return saved["weight"], expected["weight"]


saved_weight, step1_weight = main()
