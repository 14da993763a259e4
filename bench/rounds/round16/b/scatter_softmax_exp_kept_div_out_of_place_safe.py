# label: safe
# why: fixed scatter_softmax keeps exp_() on the fresh recentered scores (sub saved nothing) but divides out of place, so the exp result saved for backward stays intact
# source: https://github.com/rusty1s/pytorch_scatter/issues/119 (fixed version of torch_scatter/composite/softmax.py)
import torch

torch.manual_seed(0)


def scatter_sum(src, index, dim=-1, dim_size=None):
    if dim_size is None:
        dim_size = int(index.max()) + 1
    out = torch.zeros(dim_size, dtype=src.dtype)
    return out.scatter_add(dim, index, src)


def scatter_max(src, index, dim=-1, dim_size=None):
    if dim_size is None:
        dim_size = int(index.max()) + 1
    out = torch.full((dim_size,), float("-inf"), dtype=src.dtype)
    return out.scatter_reduce(dim, index, src, reduce="amax", include_self=True), None


def scatter_softmax(src, index, dim=-1, eps=1e-12):
    max_value_per_index = scatter_max(src, index, dim=dim)[0]
    max_per_src_element = max_value_per_index.gather(dim, index)

    recentered_scores = src - max_per_src_element
    recentered_scores_exp = recentered_scores.exp_()

    sum_per_index = scatter_sum(recentered_scores_exp, index, dim)
    normalizing_constants = sum_per_index.add_(eps).gather(dim, index)

    return recentered_scores_exp.div(normalizing_constants)


class EdgeAttention(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.att = torch.nn.Linear(2 * dim, 1, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        logits = self.att(torch.cat([x[src], x[dst]], dim=-1)).squeeze(-1)
        alpha = scatter_softmax(logits, dst)
        out = torch.zeros_like(x).index_add(0, dst, alpha.unsqueeze(-1) * x[src])
        return out


x = torch.randn(4, 3, requires_grad=True)
edge_index = torch.tensor([[0, 1, 2, 3, 0, 2], [1, 0, 1, 2, 3, 3]])
layer = EdgeAttention(3)
out = layer(x, edge_index)
loss = out.pow(2).sum()
loss.backward()
x_grad = x.grad
