# label: hazard raises
# why: to_symmetric gathers the edge values with [perm], which saves perm for backward, and then reuses perm as the out= buffer of torch.cat for the new row/col indices, overwriting the saved index before learnable edge weights are backpropagated
# source: https://github.com/rusty1s/pytorch_sparse/pull/327
from typing import Optional

import torch

torch.manual_seed(0)


def segment_csr(src: torch.Tensor, indptr: torch.Tensor, reduce: str = "sum") -> torch.Tensor:
    lengths = indptr[1:] - indptr[:-1]
    return torch.segment_reduce(src, reduce, lengths=lengths)


class SparseTensor(object):
    def __init__(self, row: torch.Tensor, col: torch.Tensor, value: Optional[torch.Tensor], sparse_sizes):
        self.row, self.col, self.value_ = row, col, value
        self.sparse_sizes = sparse_sizes

    def coo(self):
        return self.row, self.col, self.value_

    def size(self, dim: int) -> int:
        return self.sparse_sizes[dim]

    def to_symmetric(self, reduce: str = "sum"):
        N = max(self.size(0), self.size(1))

        row, col, value = self.coo()
        idx = col.new_full((2 * col.numel() + 1, ), -1)
        idx[1:row.numel() + 1] = row
        idx[row.numel() + 1:] = col
        idx[1:] *= N
        idx[1:row.numel() + 1] += col
        idx[row.numel() + 1:] += row

        idx, perm = idx.sort()
        mask = idx[1:] > idx[:-1]
        perm = perm[1:].sub_(1)
        idx = perm[mask]

        if value is not None:
            ptr = mask.nonzero().flatten()
            ptr = torch.cat([ptr, ptr.new_full((1, ), perm.size(0))])
            value = torch.cat([value, value])[perm]
            value = segment_csr(value, ptr, reduce=reduce)

        new_row = torch.cat([row, col], dim=0, out=perm)[idx]  # <-- IPL001: perm was saved by the [perm] gather above
        new_col = torch.cat([col, row], dim=0, out=perm)[idx]  # <-- IPL001: second overwrite of the saved index buffer

        return SparseTensor(row=new_row, col=new_col, value=value, sparse_sizes=(N, N))

    def matmul(self, x: torch.Tensor) -> torch.Tensor:
        msg = self.value_.unsqueeze(-1) * x[self.col]
        return torch.zeros(self.sparse_sizes[0], x.size(-1)).index_add(0, self.row, msg)


class GCNWithLearnedEdgeWeights(torch.nn.Module):
    def __init__(self, num_edges, in_channels, out_channels):
        super().__init__()
        self.edge_logits = torch.nn.Parameter(torch.zeros(num_edges))
        self.lin = torch.nn.Linear(in_channels, out_channels)

    def forward(self, x, edge_index, num_nodes):
        edge_weight = torch.sigmoid(self.edge_logits)
        adj = SparseTensor(edge_index[0], edge_index[1], edge_weight, (num_nodes, num_nodes))
        adj = adj.to_symmetric()
        return adj.matmul(self.lin(x))


edge_index = torch.tensor([[0, 1, 2, 3, 1], [1, 2, 3, 0, 0]])
x = torch.randn(4, 3)
model = GCNWithLearnedEdgeWeights(edge_index.size(1), 3, 2)
out = model(x, edge_index, 4)
loss = out.pow(2).mean()
loss.backward()
