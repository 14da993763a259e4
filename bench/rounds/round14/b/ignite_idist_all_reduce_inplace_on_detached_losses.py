# label: hazard raises
# why: idist.all_reduce hands the caller's tensor to the native backend, whose dist.all_reduce reduces it in place; the training step logs losses.detach(), which shares storage and version counter with the per-sample losses that the learned-weighting product saved for backward
# source: https://github.com/pytorch/ignite/commit/7c6f535a71ed0925ec026e5ae9b3c8ec6c65d9c8
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _NativeDistModel:
    """Single-process stand-in for ignite's native comp model: every replica holds the
    same values, so the SUM all-reduce done by torch.distributed equals world_size * tensor."""

    _reduce_op_map = {"SUM": "sum", "MAX": "max"}

    def __init__(self, world_size=2):
        self._world_size = world_size

    def get_world_size(self):
        return self._world_size

    def _dist_all_reduce(self, tensor, reduce_op):
        # torch.distributed.all_reduce(tensor, reduce_op): result is written into `tensor`
        if reduce_op == "sum":
            tensor.mul_(self._world_size)  # <-- IPL001: in-place collective on a tensor whose storage backward still needs
        return tensor

    def _do_all_reduce(self, tensor, op="SUM", group=None):
        if op not in self._reduce_op_map:
            raise ValueError(f"Unsupported reduction operation: '{op}'")
        reduce_op = self._reduce_op_map[op]
        self._dist_all_reduce(tensor, reduce_op)
        return tensor

    def all_reduce(self, tensor, op="SUM", group=None):
        if isinstance(tensor, float):
            return tensor * self._world_size
        return self._do_all_reduce(tensor, op, group=group)


_model = _NativeDistModel(world_size=2)


def all_reduce(tensor, op="SUM", group=None):
    return _model.all_reduce(tensor, op, group=group)


def get_world_size():
    return _model.get_world_size()


class Engine:
    def __init__(self, process_function):
        self._process_function = process_function
        self.state = {"iteration": 0, "output": None}

    def run(self, data):
        for batch in data:
            self.state["iteration"] += 1
            self.state["output"] = self._process_function(self, batch)
        return self.state


model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
# learned per-class loss weighting (homoscedastic uncertainty): loss_i * exp(-s_y) + s_y
log_vars = nn.Parameter(torch.zeros(4))
optimizer.add_param_group({"params": [log_vars]})


def train_step(engine, batch):
    model.train()
    optimizer.zero_grad()
    x, y = batch
    y_pred = model(x)
    losses = F.cross_entropy(y_pred, y, reduction="none")
    s_y = log_vars[y]
    loss = (losses * torch.exp(-s_y) + s_y).mean()
    # log the unweighted batch loss averaged over all processes
    batch_losses = all_reduce(losses.detach()) / get_world_size()
    loss.backward()
    optimizer.step()
    return {"loss": loss.item(), "batch_loss_mean": batch_losses.mean().item()}


data = [(torch.randn(8, 6), torch.randint(0, 4, (8,))) for _ in range(2)]
trainer = Engine(train_step)
state = trainer.run(data)
