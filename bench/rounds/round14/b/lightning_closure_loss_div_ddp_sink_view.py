# label: hazard raises
# why: under DDP the training_step output passes through a custom autograd Function that returns its inputs as-is, so the loss is a view created inside a custom Function and closure_loss /= normalize is forbidden
# source: https://github.com/Lightning-AI/pytorch-lightning/commit/055d1b2210baa83ae004a7d7d2a38dfce512cb26 (PR https://github.com/Lightning-AI/pytorch-lightning/pull/9649)
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import torch
import torch.nn as nn

torch.manual_seed(0)


class _DDPSink(torch.autograd.Function):
    @staticmethod
    def forward(ctx, reducer_state, *inputs):
        ctx.set_materialize_grads(False)
        ctx.reducer_state = reducer_state
        return inputs  # nightly-1.10 behaviour: outputs are the inputs, returned as-is

    @staticmethod
    def backward(ctx, *grad_outputs):
        ctx.reducer_state["backward_calls"] += 1
        return (None, *grad_outputs)


class DistributedDataParallel(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module
        self._reducer_state = {"backward_calls": 0}

    def forward(self, *inputs, **kwargs):
        output = self.module.training_step(*inputs, **kwargs)
        loss, = _DDPSink.apply(self._reducer_state, output["loss"])
        output["loss"] = loss
        return output


class BoringModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 2)

    def training_step(self, batch, batch_idx):
        output = self.layer(batch)
        loss = nn.functional.mse_loss(output, torch.ones_like(output))
        return {"loss": loss}


@dataclass
class ClosureResult:
    closure_loss: Optional[torch.Tensor]
    loss: Optional[torch.Tensor] = field(init=False, default=None)
    extra: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.closure_loss is not None:
            self.loss = self.closure_loss.detach().clone()

    @classmethod
    def from_training_step_output(cls, training_step_output, normalize=1):
        closure_loss, extra = None, {}
        if isinstance(training_step_output, dict):
            closure_loss = training_step_output.get("loss")
            extra = {k: v for k, v in training_step_output.items() if k not in ("loss", "hiddens")}
        if closure_loss is not None:
            # accumulate the loss. If ``accumulate_grad_batches == 1``, no effect
            closure_loss /= normalize  # <-- IPL001: closure_loss is a view returned as-is by a custom Function
        return cls(closure_loss, extra=extra)


model = DistributedDataParallel(BoringModel())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accumulate_grad_batches = 2
batch = torch.randn(4, 8)
training_step_output = model(batch, 0)
result = ClosureResult.from_training_step_output(training_step_output, accumulate_grad_batches)
result.closure_loss.backward()
optimizer.step()
