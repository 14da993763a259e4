# label: safe
# why: the trainer takes ownership of the first graph-owned loss with clone() before the next replay overwrites it, and accumulates later losses into that private copy with add_, so replays writing the static output in place no longer affect the logged loss.
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
            self._static_output.copy_(out.detach())
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
        accumulated_loss = None
        for inputs, labels in microbatch_groups:
            loss = self.forward_backward_step(inputs, labels, global_valid_tokens)
            loss = loss.detach()
            if accumulated_loss is None:
                # Take ownership before the next replay overwrites the
                # graph-owned output. Later losses accumulate in place.
                accumulated_loss = loss.clone()
            else:
                accumulated_loss.add_(loss)
        self.optimizer.step()
        return accumulated_loss


def main():
    trainer = Trainer()
    microbatches = [(torch.randint(0, 16, (2, 4)), torch.randint(0, 16, (2, 4))) for _ in range(3)]
    loss = trainer.train_step(microbatches)
    return loss, trainer.model[2].weight.detach().clone()


loss, weight = main()
