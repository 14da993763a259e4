# label: hazard silent
# why: BaseTransform.__call__ only makes a shallow copy.copy(data), so a transform that does data.pos += noise writes into the dataset's own pos tensor; the augmentation accumulates across epochs and the stored graphs silently drift.
# source: https://github.com/pyg-team/pytorch_geometric/issues/9505
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Data:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class BaseTransform:
    def __call__(self, data):
        # Shallow-copy the data so that we prevent in-place data modification.
        return self.forward(copy.copy(data))

    def forward(self, data):
        return data


class RandomJitter(BaseTransform):
    def __init__(self, translate):
        self.translate = translate

    def forward(self, data):
        noise = torch.empty_like(data.pos).uniform_(-self.translate, self.translate)
        data.pos += noise  # <-- IPL004
        return data


class InMemoryDataset:
    def __init__(self, graphs, transform=None):
        self._data_list = graphs
        self.transform = transform

    def __len__(self):
        return len(self._data_list)

    def __getitem__(self, idx):
        data = self._data_list[idx]
        return data if self.transform is None else self.transform(data)


class PointConv(nn.Module):
    def __init__(self, hidden=16, out_channels=2):
        super().__init__()
        self.local_nn = nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.global_nn = nn.Linear(hidden, out_channels)

    def forward(self, pos, edge_index):
        src, dst = edge_index
        msg = self.local_nn(pos[src] - pos[dst])
        out = torch.zeros(pos.shape[0], msg.shape[1]).index_add(0, dst, msg)
        return self.global_nn(out.mean(dim=0, keepdim=True))


def make_graph(num_nodes, label):
    pos = torch.randn(num_nodes, 3)
    src = torch.arange(num_nodes)
    edge_index = torch.stack([src, (src + 1) % num_nodes])
    return Data(pos=pos, edge_index=edge_index, y=torch.tensor([label]))


def main():
    graphs = [make_graph(6, 0), make_graph(7, 1)]
    dataset = InMemoryDataset(graphs, transform=RandomJitter(0.5))
    model = PointConv()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for epoch in range(3):
        for idx in range(len(dataset)):
            data = dataset[idx]
            loss = F.cross_entropy(model(data.pos, data.edge_index), data.y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
    return torch.stack(losses), graphs[0].pos


losses, stored_pos = main()
