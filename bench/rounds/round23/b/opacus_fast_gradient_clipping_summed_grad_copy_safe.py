# label: safe
# why: the fix stores a deep copy of p.grad in p.summed_grad and accumulates with add_ into that private buffer, so the in-place zero_grad and backward accumulation into p.grad no longer touch the summed gradient.
# source: https://github.com/pytorch/opacus/commit/53b3c25432bb75dd92b22131d02fcdc39c8dbe5f
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DPOptimizerFastGradientClipping:
    def __init__(self, optimizer, noise_multiplier, max_grad_norm, expected_batch_size):
        self.original_optimizer = optimizer
        self.noise_multiplier = noise_multiplier
        self.max_grad_norm = max_grad_norm
        self.expected_batch_size = expected_batch_size
        self.params = [p for group in optimizer.param_groups for p in group["params"]]
        for p in self.params:
            p.summed_grad = None
        self._step_skip_queue = []
        self._is_last_step_skipped = False

    def signal_skip_step(self, do_skip=True):
        self._step_skip_queue.append(do_skip)

    def _check_skip_next_step(self):
        if self._step_skip_queue:
            return self._step_skip_queue.pop(0)
        return False

    def accumulate(self):
        """
        Performs gradient accumulation.
        Stores aggregated gradients into `p.summed_grad```
        """
        for p in self.params:
            if p.summed_grad is not None:
                p.summed_grad.add_(p.grad.data)
            else:
                p.summed_grad = copy.deepcopy(p.grad.data)

    def zero_grad(self, set_to_none=False):
        for p in self.params:
            if not self._is_last_step_skipped:
                p.summed_grad = None
        self.original_optimizer.zero_grad(set_to_none)

    def add_noise(self):
        for p in self.params:
            noise = torch.zeros_like(p) * self.noise_multiplier * self.max_grad_norm
            p.grad = (p.summed_grad + noise).view_as(p)

    def scale_grad(self):
        for p in self.params:
            p.grad /= self.expected_batch_size

    def pre_step(self):
        self.accumulate()
        if self._check_skip_next_step():
            self._is_last_step_skipped = True
            return False
        self.add_noise()
        self.scale_grad()
        self._is_last_step_skipped = False
        return True

    def step(self):
        if self.pre_step():
            return self.original_optimizer.step()
        return None


def main():
    model = nn.Linear(4, 1)
    optimizer = DPOptimizerFastGradientClipping(
        torch.optim.SGD(model.parameters(), lr=0.5), noise_multiplier=0.0,
        max_grad_norm=1.0, expected_batch_size=12)
    data, target = torch.randn(12, 4), torch.randn(12, 1)
    # BatchMemoryManager: one logical batch of 12 split into 3 physical batches of 4
    physical_batches = list(zip(data.split(4), target.split(4)))
    for i, (x, y) in enumerate(physical_batches):
        optimizer.signal_skip_step(do_skip=i < len(physical_batches) - 1)
        optimizer.zero_grad(set_to_none=False)
        loss = F.mse_loss(model(x), y, reduction="sum")
        loss.backward()
        optimizer.step()
    return model.weight.detach().clone(), model.bias.detach().clone()


weight, bias = main()
