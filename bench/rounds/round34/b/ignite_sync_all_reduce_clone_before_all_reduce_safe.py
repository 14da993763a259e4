# label: safe no-twin
# why: the commit's sync_all_reduce hands `t.clone()` to idist.all_reduce, so the in-place collective reduces a copy and the accumulator restored after compute() is the local, unreduced one; update -> compute -> update -> compute stays correct. no-twin: dist.all_reduce and the `+=` accumulators work in place by design (an out-of-place rewrite of the collective would drop the reduction).
# source: https://github.com/pytorch/ignite/commit/67c6709b0fc664be3ec3fab7354228e078bc1a05
from functools import wraps
from numbers import Number
from typing import Any, Callable, Dict, Optional, Sequence, Union, cast

import torch

torch.manual_seed(0)


class dist:
    """Stand-in for torch.distributed with two ranks holding identical replicas."""

    world_size = 2

    class ReduceOp:
        SUM = "sum"

    @staticmethod
    def all_reduce(tensor, op=None, group=None):
        # every rank contributes the same value: the in-place SUM multiplies by the world size
        tensor.mul_(dist.world_size)


class _NativeDistModel:
    _reduce_op_map = {"SUM": dist.ReduceOp.SUM}

    def __init__(self):
        self._collective_op_dtype = None

    def get_world_size(self) -> int:
        return dist.world_size

    def device(self) -> torch.device:
        return torch.device("cpu")

    def _apply_op(self, tensor: torch.Tensor, device: torch.device, fn: Callable, *args: Any, **kwargs: Any) -> torch.Tensor:
        tensor_device = None
        if tensor.device != device:
            tensor_device = tensor.device
            tensor = tensor.to(device)
        tensor = fn(tensor, *args, **kwargs)
        if tensor_device is not None:
            return tensor.to(device=tensor_device)
        return tensor

    def _collective_op(self, tensor: Union[torch.Tensor, float], fn: Callable, *args: Any, **kwargs: Any):
        tensor_to_number = False
        device = self.device()
        if isinstance(tensor, (Number, float)):
            tensor_to_number = True
            tensor = torch.tensor(tensor, device=device, dtype=self._collective_op_dtype)
        tensor = self._apply_op(tensor, device, fn, *args, **kwargs)
        if tensor_to_number:
            return tensor.item()
        return tensor

    def all_reduce(self, tensor: Union[torch.Tensor, float], op: str = "SUM", group: Optional[Any] = None):
        if not isinstance(tensor, (torch.Tensor, Number)):
            raise TypeError(f"Unhandled input type {type(tensor)}")
        return self._collective_op(tensor, self._do_all_reduce, op, group=group)

    def _do_all_reduce(self, tensor: torch.Tensor, op: str = "SUM", group: Optional[Any] = None) -> torch.Tensor:
        if op not in self._reduce_op_map:
            raise ValueError(f"Unsupported reduction operation: '{op}'")
        reduce_op = self._reduce_op_map[op]
        dist.all_reduce(tensor, reduce_op)
        return tensor


class idist:
    _model = _NativeDistModel()

    @staticmethod
    def get_world_size() -> int:
        return idist._model.get_world_size()

    @staticmethod
    def all_reduce(tensor, op: str = "SUM", group=None):
        return idist._model.all_reduce(tensor, op, group=group)


class Metric:
    def __init__(self, output_transform: Callable = lambda x: x, device: Union[str, torch.device] = torch.device("cpu")):
        self._output_transform = output_transform
        self._device = torch.device(device)
        self.reset()


def reinit__is_reduced(func: Callable) -> Callable:
    @wraps(func)
    def wrapper(self: Metric, *args: Any, **kwargs: Any) -> None:
        func(self, *args, **kwargs)

    return wrapper


def sync_all_reduce(*attrs: Any) -> Callable:
    def wrapper(func: Callable) -> Callable:
        @wraps(func)
        def another_wrapper(self: Metric, *args: Any, **kwargs: Any) -> Callable:
            ws = idist.get_world_size()
            unreduced_attrs = {}
            if len(attrs) > 0 and ws > 1:
                for attr in attrs:
                    op_kwargs = {}
                    if ":" in attr:
                        attr, op = attr.split(":")
                        op_kwargs["op"] = op
                    if attr not in self.__dict__:
                        raise ValueError(f"Metric {type(self)} has no attribute named `{attr}`.")
                    t = getattr(self, attr)
                    if not isinstance(t, (Number, torch.Tensor)):
                        raise TypeError(f"Attribute provided to sync_all_reduce should be a number or tensor but `{attr}` has type {type(t)}")
                    unreduced_attrs[attr] = t
                    # Here `clone` is necessary since `idist.all_reduce` modifies `t` inplace in the case
                    # `t` is a tensor and its `device` is same as that of the process.
                    t_reduced = idist.all_reduce(cast(float, t) if isinstance(t, Number) else t.clone(), **op_kwargs)
                    setattr(self, attr, t_reduced)

            result = func(self, *args, **kwargs)

            for attr, value in unreduced_attrs.items():
                setattr(self, attr, value)
            return result

        return another_wrapper

    return wrapper


class Loss(Metric):
    required_output_keys = ("y_pred", "y")

    def __init__(self, loss_fn: Callable, output_transform: Callable = lambda x: x, batch_size: Callable = len, device=torch.device("cpu")):
        super().__init__(output_transform, device=device)
        self._loss_fn = loss_fn
        self._batch_size = batch_size

    @reinit__is_reduced
    def reset(self) -> None:
        self._sum = torch.tensor(0.0, device=self._device)
        self._num_examples = 0

    @reinit__is_reduced
    def update(self, output: Sequence[Union[torch.Tensor, Dict]]) -> None:
        y_pred, y = output[0].detach(), output[1].detach()
        average_loss = self._loss_fn(y_pred, y).detach()
        n = self._batch_size(y)
        self._sum += average_loss.to(self._device) * n
        self._num_examples += n

    @sync_all_reduce("_sum", "_num_examples")
    def compute(self) -> float:
        if self._num_examples == 0:
            raise RuntimeError("Loss must have at least one example before it can be computed.")
        return self._sum.item() / self._num_examples


def main():
    model = torch.nn.Linear(4, 1)
    metric = Loss(torch.nn.functional.mse_loss)
    results = []
    for _ in range(3):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        with torch.no_grad():
            metric.update((model(x), y))
        results.append(metric.compute())  # e.g. a running-average log after each iteration
    return torch.tensor(results), metric._sum.clone()


running_losses, final_sum = main()
