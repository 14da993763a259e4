# label: hazard silent
# why: spline() scales the pseudo-coordinates with values *= kernel_size, but values is adj._values(), the adjacency's own storage, so every later SplineGCN layer (and every later epoch) on the same adj computes its B-spline basis from already-scaled coordinates.
# source: https://github.com/pyg-team/pytorch_geometric/commit/29856b838eae03f9e7a009f3ca94b5763581b8b0 ("bugfix inplace mult of values")
from functools import reduce
from itertools import product

import torch
import torch.nn as nn

torch.manual_seed(0)


def create_mask(dim, m, type=torch.LongTensor):
    mask = list(product(*[range(m) for _ in range(dim)]))
    mask = torch.LongTensor(mask).type(type)
    mask += torch.arange(0, dim * m, m).type_as(mask)
    return mask


def spline(values, kernel_size, is_open_spline, degree):
    if degree != 1:
        raise NotImplementedError()

    kernel_size = kernel_size - is_open_spline

    values = values.unsqueeze(1) if len(values.size()) < 2 else values
    values *= kernel_size.type_as(values)  # <-- IPL004

    amount = values.frac()
    amount = torch.stack([amount, 1 - amount], dim=len(values.size()))

    index_g = values.floor().long()

    # Open splines adjustments.
    kernel_size = kernel_size.type_as(index_g)
    is_open_spline = is_open_spline.type_as(index_g)
    index_g -= is_open_spline * (index_g >= kernel_size).type_as(index_g)
    index_f = index_g + is_open_spline

    # Closed splines adjustments.
    is_closed_spline = 1 - is_open_spline
    index_g -= is_closed_spline
    index_g += is_closed_spline * (index_g < 0).type_as(index_g) * kernel_size
    index_f -= is_closed_spline * (index_f >= kernel_size).type_as(index_f) * kernel_size

    index = torch.stack([index_f, index_g], dim=len(values.size()))
    return amount, index


def spline_weights(values, kernel_size, is_open_spline, degree):
    amount, index = spline(values, kernel_size, is_open_spline, degree)
    dim = amount.size(1)
    m = amount.size(2)
    mask = create_mask(dim, m, index.type())

    amount = amount.view(-1, m * dim)
    amount = amount[:, mask.view(-1)]
    amount = amount.view(-1, m ** dim, dim)
    amount = amount.prod(2)

    off = [reduce(lambda x, y: x * y, kernel_size.tolist()[i:]) for i in range(1, dim)]
    off.append(1)
    off = torch.LongTensor([off]).type_as(index).t()
    index = off * index

    index = index.view(-1, m * dim)
    index = index[:, mask.view(-1)]
    index = index.view(-1, m ** dim, dim)
    index = index.sum(2)
    return amount, index


def edgewise_spline_weighting(input, weight, amount, index):
    # output[e] = sum_k amount[e, k] * input[e] @ weight[index[e, k]]
    w = weight[index]  # [|E|, K, M_in, M_out]
    out = torch.einsum('ei,ekio->eko', input, w)
    return (amount.unsqueeze(-1) * out).sum(1)


class Adjacency(object):
    """Stand-in for the torch.sparse adjacency: _values() hands out the stored values tensor itself."""

    def __init__(self, indices, values, size):
        self.indices_, self.values_, self.size_ = indices, values, size

    def _values(self):
        return self.values_

    def _indices(self):
        return self.indices_

    def size(self, dim):
        return self.size_[dim]


def spline_gcn(adj, input, weight, kernel_size, is_open_spline, degree=1, bias=None):
    values = adj._values()
    row, col = adj._indices()

    # Get features for every end vertex with shape [|E| x M_in].
    output = input[col]

    # Convert to [|E| x M_in] feature matrix and calculate [|E| x M_out].
    amount, index = spline_weights(values, kernel_size, is_open_spline, degree)
    output = edgewise_spline_weighting(output, weight, amount, index)

    # Convolution via `scatter_add`.
    zero = torch.zeros(adj.size(1), output.size(1))
    row = row.view(-1, 1).expand(row.size(0), output.size(1))
    output = zero.scatter_add(0, row, output)

    root_index = torch.arange(0, reduce(lambda x, y: x * y, kernel_size.tolist()[1:]))
    root_weight = weight[root_index].mean(0)
    output = output + torch.mm(input, root_weight)
    if bias is not None:
        output = output + bias
    return output


class SplineGCN(nn.Module):
    def __init__(self, in_features, out_features, dim, kernel_size, is_open_spline=True, degree=1, bias=True):
        super(SplineGCN, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.degree = degree
        self.kernel_size = torch.LongTensor([kernel_size] * dim)
        self.is_open_spline = torch.LongTensor([1 if is_open_spline else 0] * dim)
        self.weight = nn.Parameter(torch.Tensor(kernel_size ** dim, in_features, out_features))
        self.bias = nn.Parameter(torch.Tensor(out_features)) if bias else None
        nn.init.uniform_(self.weight, -0.5, 0.5)
        nn.init.uniform_(self.bias, -0.1, 0.1)

    def forward(self, adj, input):
        return spline_gcn(adj, input, self.weight, self.kernel_size, self.is_open_spline, self.degree, self.bias)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = SplineGCN(1, 8, dim=2, kernel_size=3)
        self.conv2 = SplineGCN(8, 3, dim=2, kernel_size=3)

    def forward(self, adj, x):
        x = torch.relu(self.conv1(adj, x))
        return self.conv2(adj, x)


def main():
    n, e = 8, 20
    indices = torch.randint(0, n, (2, e))
    # pseudo-coordinates of nearby neighbours (Cartesian, normalised)
    pseudo = torch.rand(e, 2) * 0.24
    adj = Adjacency(indices, pseudo, (n, n, 2))
    x = torch.ones(n, 1)
    y = torch.randint(0, 3, (n,))
    model = Net()
    out = model(adj, x)
    loss = nn.functional.cross_entropy(out, y)
    loss.backward()
    return out.detach(), model.conv1.weight.grad.clone(), model.conv2.weight.grad.clone()


out, grad1, grad2 = main()
