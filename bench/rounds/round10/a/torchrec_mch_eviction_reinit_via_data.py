# label: hazard silent
# why: the "fix" re-initializes evicted rows through .data, which hides the version bump; the first forward's tied output layer then backpropagates with the new rows instead of the values it actually used
# source: https://github.com/meta-pytorch/torchrec/pull/2836
import torch
import torch.nn as nn

torch.manual_seed(0)


class MCHManagedCollisionModule(nn.Module):
    """maps raw ids to a fixed number of slots; evicts the least recently seen ids when full"""

    def __init__(self, zch_size):
        super().__init__()
        self._zch_size = zch_size
        self.register_buffer("_mch_raw_ids", torch.full((zch_size,), -1, dtype=torch.long))
        self.register_buffer("_mch_last_seen", torch.zeros(zch_size, dtype=torch.long))
        self._step = 0

    def profile(self, raw_ids):
        """admit new ids; returns slots whose previous owner was evicted"""
        self._step += 1
        evicted = []
        for rid in raw_ids.unique().tolist():
            hit = (self._mch_raw_ids == rid).nonzero()
            if len(hit):
                self._mch_last_seen[hit[0, 0]] = self._step
                continue
            slot = int(torch.argmin(self._mch_last_seen))
            if self._mch_raw_ids[slot] != -1:
                evicted.append(slot)
            self._mch_raw_ids[slot] = rid
            self._mch_last_seen[slot] = self._step
        return torch.tensor(evicted, dtype=torch.long)

    def remap(self, raw_ids):
        return (self._mch_raw_ids.unsqueeze(0) == raw_ids.unsqueeze(1)).long().argmax(1)


class ManagedCollisionEmbeddingCollection(nn.Module):
    def __init__(self, zch_size, dim):
        super().__init__()
        self.mc = MCHManagedCollisionModule(zch_size)
        self.embedding = nn.Embedding(zch_size, dim)

    def forward(self, raw_ids):
        evicted = self.mc.profile(raw_ids)
        if evicted.numel() > 0:
            with torch.no_grad():
                table = self.embedding.weight.data
                table[evicted] = torch.randn(len(evicted), self.embedding.embedding_dim) * 0.01  # <-- IPL007: .data write into the item table that the previous forward saved; its gradient silently uses the re-initialized rows
        slots = self.mc.remap(raw_ids)
        return self.embedding(slots), slots


class TwoTower(nn.Module):
    def __init__(self, n_users=4, zch_size=5, dim=4):
        super().__init__()
        self.user_tower = nn.Embedding(n_users, dim)
        self.item_ebc = ManagedCollisionEmbeddingCollection(zch_size, dim)

    def forward(self, user_ids, item_raw_ids):
        item_emb, slots = self.item_ebc(item_raw_ids)
        user_emb = self.user_tower(user_ids)
        # in-batch + full-table softmax with the item table tied as output layer
        logits = user_emb @ self.item_ebc.embedding.weight.t()
        return nn.functional.cross_entropy(logits, slots) + (user_emb * item_emb).sum(-1).neg().mean()


model = TwoTower()
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
batches = [(torch.tensor([0, 1, 2]), torch.tensor([101, 102, 103])),
           (torch.tensor([3, 0, 1]), torch.tensor([104, 105, 106]))]
optimizer.zero_grad()
losses = []
for user_ids, item_ids in batches:     # multiple forwards, one backward (gradient accumulation)
    losses.append(model(user_ids, item_ids))
total_loss = sum(losses)
total_loss.backward()
optimizer.step()
