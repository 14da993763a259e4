# label: hazard silent
# why: after capture, each replay copies the new loss into the graph-owned static output in place, so the loss.detach() handles the trainer appended for earlier microbatches all alias that buffer and the summed loss silently repeats the last microbatch.
# source: https://github.com/pytorch/torchtitan/commit/2807d3f550fe27db18bd9395ba63176364eaed6d
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CUDAGraphWrapper:
    """CPU stand-in: the first call 'captures', later calls 'replay' into static storage."""

    def __init__(self, fn):
        self._fn = fn
        self._static_output = None

    def __call__(self, *args):
        out = self._fn(*args)
        if self._static_output is None:
            self._static_output = out.detach().clone()  # capture allocates graph-owned storage
        else:
            self._static_output.copy_(out.detach())  # <-- IPL002
        return self._static_output


def wrap_with_cuda_graph(fwd_bwd_fn):
    """After capture, the returned loss aliases graph-owned storage that is
    overwritten by the next replay."""
    graph_wrapper = CUDAGraphWrapper(fwd_bwd_fn)

    def run(inputs, labels, global_valid_tokens):
        return graph_wrapper(inputs, labels, global_valid_tokens)

    return run


class Trainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Embedding(16, 8), nn.Flatten(0, 1), nn.Linear(8, 16))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.forward_backward_step = wrap_with_cuda_graph(self._forward_backward_step)

    def _forward_backward_step(self, inputs, labels, global_valid_tokens):
        logits = self.model(inputs)
        loss = F.cross_entropy(logits, labels.flatten(), reduction="sum") / global_valid_tokens
        loss.backward()
        return loss

    def train_step(self, microbatch_groups):
        self.optimizer.zero_grad()
        global_valid_tokens = torch.tensor(float(sum(l.numel() for _, l in microbatch_groups)))
        accumulated_losses = []
        for inputs, labels in microbatch_groups:
            loss = self.forward_backward_step(inputs, labels, global_valid_tokens)
            accumulated_losses.append(loss.detach())
        self.optimizer.step()
        # Reduce the data collected over gradient accumulation steps.
        return torch.sum(torch.stack(accumulated_losses))


def main():
    trainer = Trainer()
    microbatches = [(torch.randint(0, 16, (2, 4)), torch.randint(0, 16, (2, 4))) for _ in range(3)]
    loss = trainer.train_step(microbatches)
    return loss, trainer.model[2].weight.detach().clone()


loss, weight = main()
