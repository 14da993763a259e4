# label: hazard silent
# why: when `num_nodes` is a tensor, `offset` becomes a tensor after the first node type and `offset += store.num_nodes` then bumps in place the very tensor already stored in `out[...]` for the previous type, so every stored offset silently reads the final running total.
# source: https://github.com/pyg-team/pytorch_geometric/pull/8430
from typing import Dict, List

import torch
from torch import Tensor

torch.manual_seed(0)


class NodeStorage(dict):
    def __init__(self, key, num_nodes, x):
        super().__init__(x=x)
        self._key = key
        self._num_nodes = num_nodes

    @property
    def num_nodes(self):
        return self._num_nodes


class EdgeStorage(dict):
    def __init__(self, key, edge_index):
        super().__init__(edge_index=edge_index)
        self._key = key


class BaseData:
    def __init__(self, node_stores: List[NodeStorage], edge_stores: List[EdgeStorage]):
        self._node_stores = node_stores
        self._edge_stores = edge_stores

    @property
    def node_stores(self):
        return self._node_stores

    @property
    def edge_stores(self):
        return self._edge_stores

    @property
    def node_offsets(self) -> Dict[str, int]:
        out: Dict[str, int] = {}
        offset: int = 0
        for store in self.node_stores:
            out[store._key] = offset
            offset += store.num_nodes  # <-- IPL002
        return out


def to_homogeneous_edge_index(data: BaseData) -> Tensor:
    node_offsets = data.node_offsets
    edge_indices = []
    for store in data.edge_stores:
        src, _, dst = store._key
        edge_index = store["edge_index"].clone()
        edge_index[0] += node_offsets[src]
        edge_index[1] += node_offsets[dst]
        edge_indices.append(edge_index)
    return torch.cat(edge_indices, dim=-1)


def main():
    # num_nodes stored as 0-dim tensors, e.g. after loading from a sampler
    paper = NodeStorage("paper", torch.tensor(4), torch.randn(4, 8))
    author = NodeStorage("author", torch.tensor(3), torch.randn(3, 8))
    inst = NodeStorage("institution", torch.tensor(2), torch.randn(2, 8))
    writes = EdgeStorage(("author", "writes", "paper"), torch.tensor([[0, 1, 2], [0, 3, 1]]))
    affil = EdgeStorage(("author", "affiliated_with", "institution"), torch.tensor([[0, 2], [1, 0]]))
    data = BaseData([paper, author, inst], [writes, affil])

    offsets = data.node_offsets
    edge_index = to_homogeneous_edge_index(data)
    node_type_start = torch.stack([torch.as_tensor(v) for v in offsets.values()])
    return edge_index, node_type_start


edge_index, node_type_start = main()
