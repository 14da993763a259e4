# label: hazard silent
# why: TensorStorage.load_state_dict adopts the checkpoint's tensor by reference, so the new buffer's in-place writes also rewrite the checkpoint and the original buffer that still shares it
# source: https://github.com/pytorch/rl/pull/3966 (commit 14ec5cc8b)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TensorStorage:
    def __init__(self, storage, max_size):
        self._storage = storage
        self.max_size = max_size
        self._len = 0

    def set(self, cursor, data):
        self._storage[cursor] = data  # <-- IPL002, IPL004: after load_state_dict this tensor is the checkpoint's (and the source buffer's) storage, which both still read
        self._len = max(self._len, int(cursor.max()) + 1)

    def get(self, index):
        return self._storage[index]

    def state_dict(self):
        return {"_storage": self._storage, "_len": self._len}

    def load_state_dict(self, state_dict):
        _storage = state_dict["_storage"]
        if isinstance(_storage, torch.Tensor):
            self._storage = _storage
        self._len = state_dict["_len"]


class ReplayBuffer:
    def __init__(self, storage, batch_size):
        self._storage = storage
        self._cursor = 0
        self._batch_size = batch_size

    def extend(self, data):
        n = data.shape[0]
        index = (torch.arange(n) + self._cursor) % self._storage.max_size
        self._storage.set(index, data)
        self._cursor = (self._cursor + n) % self._storage.max_size

    def sample(self, generator):
        idx = torch.randint(0, self._storage._len, (self._batch_size,), generator=generator)
        return self._storage.get(idx)

    def state_dict(self):
        return {"_storage": self._storage.state_dict(), "_cursor": self._cursor}

    def load_state_dict(self, sd):
        self._storage.load_state_dict(sd["_storage"])
        self._cursor = sd["_cursor"]


def collect(n):
    obs = torch.randn(n, 4)
    reward = obs.sum(-1, keepdim=True)
    return torch.cat([obs, reward], -1)


def td_loss(qnet, batch):
    obs, reward = batch[:, :4], batch[:, 4:]
    return F.mse_loss(qnet(obs), reward)


rb = ReplayBuffer(TensorStorage(torch.zeros(16, 5), 16), batch_size=8)
rb.extend(collect(12))
checkpoint = rb.state_dict()

# resume a second learner from the checkpoint and keep collecting with it
rb_resumed = ReplayBuffer(TensorStorage(torch.zeros(16, 5), 16), batch_size=8)
rb_resumed.load_state_dict(checkpoint)
rb_resumed.extend(collect(10))

# the original learner keeps training on its own buffer
qnet = nn.Linear(4, 1)
opt = torch.optim.SGD(qnet.parameters(), lr=0.1)
g = torch.Generator().manual_seed(1)
for _ in range(3):
    loss = td_loss(qnet, rb.sample(g))
    opt.zero_grad()
    loss.backward()
    opt.step()

final_loss = td_loss(qnet, rb.sample(g)).detach()
checkpoint_storage = checkpoint["_storage"]["_storage"].clone()
