# label: hazard raises
# why: NormalizeFeatures divides each graph's x in place, but every x is a view of the dataset's collated feature tensor, so normalizing the next graph bumps the version of the storage that the Linear layer saved for the previous graph
# source: https://github.com/pyg-team/pytorch_geometric/commit/ada5b9a4d6020564786cdff71c927068fd878a7f
from typing import List

import torch

torch.manual_seed(0)


class Data:
    def __init__(self, x, y):
        self._store = {"x": x, "y": y}

    @property
    def stores(self):
        return [self]

    def items(self, *keys):
        return [(k, self._store[k]) for k in keys if k in self._store]

    def __getattr__(self, key):
        store = self.__dict__.get("_store", {})
        if key in store:
            return store[key]
        raise AttributeError(key)


class InMemoryDataset:
    """Collated storage: every graph's x is a slice (view) of one big tensor."""

    def __init__(self, num_graphs=3, nodes=4, feats=5, transform=None):
        self.x = torch.rand(num_graphs * nodes, feats) * 3
        self.y = torch.randint(0, 2, (num_graphs,))
        self.nodes = nodes
        self.transform = transform

    def get(self, idx):
        sl = slice(idx * self.nodes, (idx + 1) * self.nodes)
        return Data(self.x[sl], self.y[idx])

    def __getitem__(self, idx):
        data = self.get(idx)
        return data if self.transform is None else self.transform(data)

    def __len__(self):
        return self.y.numel()


class NormalizeFeatures:
    r"""Row-normalizes the attributes given in :obj:`attrs` to sum-up to one."""

    def __init__(self, attrs: List[str] = ["x"]):
        self.attrs = attrs

    def __call__(self, data):
        for store in data.stores:
            for key, value in store.items(*self.attrs):
                value.div_(value.sum(dim=-1, keepdim=True).clamp_(min=1.))  # <-- IPL004, IPL001: value is a view into the dataset's collated x, whose earlier slices the Linear layer already saved for backward
        return data


dataset = InMemoryDataset(transform=NormalizeFeatures())
lin = torch.nn.Linear(5, 2)
logits = []
for i in range(len(dataset)):
    data = dataset[i]
    logits.append(lin(data.x).mean(0))
logits = torch.stack(logits)
loss = torch.nn.functional.cross_entropy(logits, dataset.y)
loss.backward()

# the raw (un-normalized) features are still needed, e.g. for a degree-style statistic
raw_feature_mass = dataset.get(0).x.sum(-1)
