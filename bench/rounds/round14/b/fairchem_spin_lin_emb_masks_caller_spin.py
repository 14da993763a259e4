# label: hazard silent
# why: the UMA spin embedding with lin_emb writes x[x == 0] = -100 into the batch's own spin tensor, so the trainer's later per-spin bookkeeping (null-spin mask, spin-weighted loss) reads -100 instead of 0
# source: https://github.com/facebookresearch/fairchem/commit/9c0aa18d71c3fc7eb71a5d2e1376531ff8f30b5e (PR https://github.com/facebookresearch/fairchem/pull/2124)
import torch
import torch.nn as nn

torch.manual_seed(0)


class ChgSpinEmbedding(nn.Module):
    def __init__(self, embedding_type, embedding_target, embedding_size, grad, scale=1.0):
        super().__init__()
        assert embedding_type in ["pos_emb", "lin_emb", "rand_emb"]
        self.embedding_type = embedding_type
        assert embedding_target in ["charge", "spin"]
        self.embedding_target = embedding_target
        assert embedding_size % 2 == 0
        if self.embedding_target == "charge":
            self._index_offset = 100
            self._num_embeddings = 201
        else:
            self._index_offset = 0
            self._num_embeddings = 101
        if self.embedding_type == "pos_emb":
            self.W = nn.Parameter(torch.randn(embedding_size // 2) * scale, requires_grad=grad)
        elif self.embedding_type == "lin_emb":
            self.lin_emb = nn.Linear(in_features=1, out_features=embedding_size)
            if not grad:
                for param in self.lin_emb.parameters():
                    param.requires_grad = False
        else:
            self.rand_emb = nn.Embedding(self._num_embeddings, embedding_size)

    def forward(self, x):
        # null token for spin is 0
        # charge is default 0
        if self.embedding_type == "pos_emb":
            x_proj = x[:, None] * self.W[None, :] * 2 * torch.pi
            if self.embedding_target == "charge":
                return torch.cat([torch.sin(x_proj), torch.cos(x_proj)], dim=-1)
            elif self.embedding_target == "spin":
                zero_idxs = torch.where(x == 0)[0]
                emb = torch.cat([torch.sin(x_proj), torch.cos(x_proj)], dim=-1)
                # this sets the null spin embedding to zero
                emb[zero_idxs] = 0
                return emb
        elif self.embedding_type == "lin_emb":
            if self.embedding_target == "spin":
                x[x == 0] = -100  # <-- IPL004: overwrites the caller's data_dict["spin"] in place
            return self.lin_emb(x.unsqueeze(-1).float())
        elif self.embedding_type == "rand_emb":
            indices = x + self._index_offset
            return self.rand_emb(indices.long())
        raise ValueError(f"embedding type {self.embedding_type} not implemented")


class TinyUMABackbone(nn.Module):
    def __init__(self, sphere_channels=8):
        super().__init__()
        self.charge_embedding = ChgSpinEmbedding("pos_emb", "charge", sphere_channels, grad=True)
        self.spin_embedding = ChgSpinEmbedding("lin_emb", "spin", sphere_channels, grad=True)
        self.mix_csd = nn.Linear(2 * sphere_channels, sphere_channels)
        self.atom_proj = nn.Linear(3, sphere_channels)
        self.energy_head = nn.Linear(sphere_channels, 1)

    def csd_embedding(self, charge, spin):
        chg_emb = self.charge_embedding(charge)
        spin_emb = self.spin_embedding(spin)
        return torch.nn.SiLU()(self.mix_csd(torch.cat((chg_emb, spin_emb), dim=1)))

    def forward(self, data_dict):
        csd_mixed_emb = self.csd_embedding(data_dict["charge"], data_dict["spin"])
        h = self.atom_proj(data_dict["pos"]) + csd_mixed_emb[data_dict["batch"]]
        per_atom = self.energy_head(torch.tanh(h)).squeeze(-1)
        energy = torch.zeros(data_dict["charge"].shape[0]).index_add(0, data_dict["batch"], per_atom)
        return {"energy": energy}


model = TinyUMABackbone()
data_dict = {
    "charge": torch.tensor([0, 1, -1, 0]),
    "spin": torch.tensor([0, 2, 1, 0]),
    "pos": torch.randn(10, 3),
    "batch": torch.tensor([0, 0, 0, 1, 1, 2, 2, 2, 3, 3]),
}
target_energy = torch.randn(4)

out = model(data_dict)
per_system_loss = (out["energy"] - target_energy) ** 2
# closed-shell systems (spin == 0, the null token) get their own weight in the loss
null_spin = data_dict["spin"] == 0
loss_weights = torch.where(null_spin, torch.tensor(0.5), torch.tensor(1.0))
loss = (per_system_loss * loss_weights).sum() / loss_weights.sum()
loss.backward()
spin_after = data_dict["spin"].clone()
