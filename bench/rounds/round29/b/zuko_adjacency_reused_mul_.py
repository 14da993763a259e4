# label: hazard silent
# why: MaskedAutoregressiveTransform._check_adjacency strips the diagonal with adjacency.mul_(), which rewrites the caller's adjacency matrix, so the caller's later reuse of the same matrix reads the diagonal-free version.
# source: https://github.com/probabilists/zuko/commit/4dfded6239337f9cb4af47691de2f6749dd97907
import torch
import torch.nn as nn

torch.manual_seed(0)


class MaskedLinear(nn.Linear):
    def __init__(self, adjacency, bias=True):
        super().__init__(*reversed(adjacency.shape), bias)
        self.register_buffer('mask', adjacency.float())

    def forward(self, x):
        return nn.functional.linear(x, self.mask * self.weight, self.bias)


class MaskedAutoregressiveTransform(nn.Module):
    def __init__(self, features, context=0, adjacency=None, total=2):
        super().__init__()
        self.total = total
        if adjacency is None:
            order = torch.arange(features)
            in_order = torch.cat((order, torch.full((context,), -1)))
            out_order = torch.repeat_interleave(order, self.total)
            adjacency = out_order[:, None] > in_order
        else:
            diameter = self._check_adjacency(adjacency)
            self.passes = diameter
            adjacency = torch.cat(
                (adjacency, torch.ones((adjacency.shape[0], context), dtype=bool)), dim=1
            )
            adjacency = torch.repeat_interleave(adjacency.bool(), repeats=self.total, dim=0)
        self.hyper = MaskedLinear(adjacency)

    def _check_adjacency(self, adjacency):
        assert adjacency.size(0) == adjacency.size(1)
        assert adjacency.diag().all(), "The diagonal of `adjacency` should be all ones."
        adjacency.mul_(  # <-- IPL004
            ~torch.eye(adjacency.size(0), dtype=torch.bool, device=adjacency.device)
        )
        indegree = adjacency.sum(dim=1).tolist()
        return int(max(indegree)) + 1

    def forward(self, x):
        phi = self.hyper(x).unflatten(-1, (-1, self.total))
        shift, log_scale = phi.unbind(-1)
        return x * log_scale.exp() + shift, log_scale.sum(-1)


def main():
    features = 4
    adjacency = torch.tril(torch.ones(features, features, dtype=torch.bool))
    transform = MaskedAutoregressiveTransform(features, adjacency=adjacency)

    x = torch.randn(8, features)
    y, ladj = transform(x)
    # the user reuses the same matrix for a DAG-sparsity penalty
    penalty = adjacency.float().sum()
    loss = (y.square().sum(-1) / 2 - ladj).mean() + 0.01 * penalty
    loss.backward()
    return loss.detach(), transform.hyper.weight.grad


loss, grad = main()
