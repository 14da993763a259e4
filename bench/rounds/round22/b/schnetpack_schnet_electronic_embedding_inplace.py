# label: hazard raises
# why: SchNet adds each ElectronicEmbedding into the nuclear embedding in place (x += embedding(x, inputs)), but that embedding's linear_q already saved x as its input for the weight gradient, so the energy loss backward finds the [n_atoms, n_atom_basis] tensor at version 1.
# source: https://github.com/atomistic-machine-learning/schnetpack/commit/a078a58fe93cd19dc9fcb9d127d2ad7316981119 ("fix: small bugs and cleanup", src/schnetpack/representation/schnet.py and painn.py)
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

Z, Rij, idx_i, idx_j, idx_m, idx, total_charge = "_atomic_numbers", "_Rij", "_idx_i", "_idx_j", "_idx_m", "_idx", "total_charge"


class ElectronicEmbedding(nn.Module):
    def __init__(self, property_key, num_features, epsilon=1e-8):
        super().__init__()
        self.property_key = property_key
        self.linear_q = nn.Linear(num_features, num_features)
        self.linear_k = nn.Linear(2, num_features, bias=False)
        self.linear_v = nn.Linear(2, num_features, bias=False)
        self.resblock = nn.Sequential(nn.SiLU(), nn.Linear(num_features, num_features, bias=False))
        self.epsilon = epsilon

    def forward(self, embedding, inputs):
        num_batch = len(inputs[idx])
        idx_m_ = inputs[idx_m]
        electronic_feature = inputs[self.property_key]
        q = self.linear_q(embedding)
        e = F.relu(torch.stack([electronic_feature, -electronic_feature], dim=-1))
        enorm = torch.maximum(e, torch.ones_like(e))
        k = self.linear_k(e / enorm)[idx_m_]
        v = self.linear_v(e)[idx_m_]
        weights = torch.sum(k * q, dim=-1) / k.shape[-1] ** 0.5
        a = nn.functional.softmax(weights, dim=0)
        anorm = a.new_zeros(num_batch).index_add_(0, idx_m_, a)
        anorm = anorm[idx_m_]
        return self.resblock((a / (anorm + self.epsilon)).unsqueeze(-1) * v)


class SchNetInteraction(nn.Module):
    def __init__(self, n_atom_basis, n_rbf, n_filters):
        super().__init__()
        self.in2f = nn.Linear(n_atom_basis, n_filters, bias=False)
        self.f2out = nn.Sequential(nn.Linear(n_filters, n_atom_basis), nn.Softplus(), nn.Linear(n_atom_basis, n_atom_basis))
        self.filter_network = nn.Sequential(nn.Linear(n_rbf, n_filters), nn.Softplus(), nn.Linear(n_filters, n_filters))

    def forward(self, x, f_ij, idx_i_, idx_j_, rcut_ij):
        x = self.in2f(x)
        Wij = self.filter_network(f_ij) * rcut_ij[:, None]
        x_ij = x[idx_j_] * Wij
        x = torch.zeros_like(x).index_add(0, idx_i_, x_ij)
        return self.f2out(x)


class SchNet(nn.Module):
    def __init__(self, n_atom_basis=16, n_interactions=2, n_rbf=8, cutoff=5.0):
        super().__init__()
        self.cutoff = cutoff
        self.offsets = torch.linspace(0, cutoff, n_rbf)
        self.embedding = nn.Embedding(100, n_atom_basis, padding_idx=0)
        self.electronic_embeddings = nn.ModuleList([ElectronicEmbedding(total_charge, n_atom_basis)])
        self.interactions = nn.ModuleList(SchNetInteraction(n_atom_basis, n_rbf, n_atom_basis) for _ in range(n_interactions))

    def forward(self, inputs):
        d_ij = torch.norm(inputs[Rij], dim=1)
        f_ij = torch.exp(-0.5 * (d_ij[:, None] - self.offsets) ** 2)
        rcut_ij = 0.5 * (torch.cos(d_ij * math.pi / self.cutoff) + 1.0) * (d_ij < self.cutoff).float()

        # compute initial embeddings
        x = self.embedding(inputs[Z])
        for embedding in self.electronic_embeddings:
            x += embedding(x, inputs)  # <-- IPL001

        # compute interaction blocks and update atomic embeddings
        for interaction in self.interactions:
            v = interaction(x, f_ij, inputs[idx_i], inputs[idx_j], rcut_ij)
            x = x + v
        inputs["scalar_representation"] = x
        return inputs


def main():
    model = SchNet()
    out_net = nn.Linear(16, 1)
    n_atoms = torch.tensor([3, 4])
    atoms = torch.tensor([8, 1, 1, 6, 1, 1, 1])
    pos = torch.randn(7, 3)
    pairs = [(a, b) for m, (s, n) in enumerate([(0, 3), (3, 4)]) for a in range(s, s + n) for b in range(s, s + n) if a != b]
    i_, j_ = torch.tensor([p[0] for p in pairs]), torch.tensor([p[1] for p in pairs])
    inputs = {Z: atoms, idx_i: i_, idx_j: j_, Rij: pos[j_] - pos[i_], idx_m: torch.repeat_interleave(torch.arange(2), n_atoms),
              idx: torch.arange(2), total_charge: torch.tensor([0.0, 1.0])}
    inputs = model(inputs)
    yi = out_net(inputs["scalar_representation"]).squeeze(-1)
    energy = torch.zeros(2).index_add(0, inputs[idx_m], yi)
    loss = F.mse_loss(energy, torch.tensor([-1.0, -2.0]))
    loss.backward()
    return energy, loss


energy, loss = main()
