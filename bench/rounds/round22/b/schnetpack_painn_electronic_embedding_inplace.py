# label: hazard raises
# why: PaiNN adds the spin/charge ElectronicEmbedding into the scalar features in place (q += embedding(q, inputs)) while that embedding's linear_q still holds q as its saved input, so backpropagating the PaiNN energy raises before any interaction block gradient is used.
# source: https://github.com/atomistic-machine-learning/schnetpack/commit/a078a58fe93cd19dc9fcb9d127d2ad7316981119 ("fix: small bugs and cleanup", src/schnetpack/representation/painn.py: q += embedding(q, inputs) -> q = q + embedding(q, inputs))
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

Z, Rij, idx_i, idx_j, idx_m, idx, total_charge = "_atomic_numbers", "_Rij", "_idx_i", "_idx_j", "_idx_m", "_idx", "total_charge"


def scatter_add(x, idx_i_, dim_size):
    return torch.zeros(dim_size, *x.shape[1:], dtype=x.dtype).index_add(0, idx_i_, x)


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


class PaiNNInteraction(nn.Module):
    def __init__(self, n_atom_basis):
        super().__init__()
        self.n_atom_basis = n_atom_basis
        self.interatomic_context_net = nn.Sequential(nn.Linear(n_atom_basis, n_atom_basis), nn.SiLU(), nn.Linear(n_atom_basis, 3 * n_atom_basis))

    def forward(self, q, mu, Wij, dir_ij, idx_i_, idx_j_, n_atoms):
        x = self.interatomic_context_net(q)
        xj = x[idx_j_]
        muj = mu[idx_j_]
        x = Wij * xj
        dq, dmuR, dmumu = torch.split(x, self.n_atom_basis, dim=-1)
        dq = scatter_add(dq, idx_i_, dim_size=n_atoms)
        dmu = dmuR * dir_ij[..., None] + dmumu * muj
        dmu = scatter_add(dmu, idx_i_, dim_size=n_atoms)
        q = q + dq
        mu = mu + dmu
        return q, mu


class PaiNNMixing(nn.Module):
    def __init__(self, n_atom_basis, epsilon=1e-8):
        super().__init__()
        self.n_atom_basis = n_atom_basis
        self.intraatomic_context_net = nn.Sequential(nn.Linear(2 * n_atom_basis, n_atom_basis), nn.SiLU(), nn.Linear(n_atom_basis, 3 * n_atom_basis))
        self.mu_channel_mix = nn.Linear(n_atom_basis, 2 * n_atom_basis, bias=False)
        self.epsilon = epsilon

    def forward(self, q, mu):
        mu_mix = self.mu_channel_mix(mu)
        mu_V, mu_W = torch.split(mu_mix, self.n_atom_basis, dim=-1)
        mu_Vn = torch.sqrt(torch.sum(mu_V**2, dim=-2, keepdim=True) + self.epsilon)
        ctx = torch.cat([q, mu_Vn], dim=-1)
        x = self.intraatomic_context_net(ctx)
        dq_intra, dmu_intra, dqmu_intra = torch.split(x, self.n_atom_basis, dim=-1)
        dmu_intra = dmu_intra * mu_W
        dqmu_intra = dqmu_intra * torch.sum(mu_V * mu_W, dim=1, keepdim=True)
        q = q + dq_intra + dqmu_intra
        mu = mu + dmu_intra
        return q, mu


class PaiNN(nn.Module):
    def __init__(self, n_atom_basis=16, n_interactions=2, n_rbf=8, cutoff=5.0):
        super().__init__()
        self.n_atom_basis = n_atom_basis
        self.n_interactions = n_interactions
        self.cutoff = cutoff
        self.offsets = torch.linspace(0, cutoff, n_rbf)
        self.embedding = nn.Embedding(100, n_atom_basis, padding_idx=0)
        self.electronic_embeddings = nn.ModuleList([ElectronicEmbedding(total_charge, n_atom_basis)])
        self.filter_net = nn.Linear(n_rbf, n_interactions * n_atom_basis * 3)
        self.interactions = nn.ModuleList(PaiNNInteraction(n_atom_basis) for _ in range(n_interactions))
        self.mixing = nn.ModuleList(PaiNNMixing(n_atom_basis) for _ in range(n_interactions))

    def forward(self, inputs):
        atomic_numbers = inputs[Z]
        r_ij = inputs[Rij]
        n_atoms = atomic_numbers.shape[0]
        d_ij = torch.norm(r_ij, dim=1, keepdim=True)
        dir_ij = r_ij / d_ij
        phi_ij = torch.exp(-0.5 * (d_ij - self.offsets) ** 2)
        fcut = 0.5 * (torch.cos(d_ij * math.pi / self.cutoff) + 1.0) * (d_ij < self.cutoff).float()
        filters = self.filter_net(phi_ij) * fcut
        filter_list = torch.split(filters, 3 * self.n_atom_basis, dim=-1)

        # compute initial embeddings
        q = self.embedding(atomic_numbers)
        for embedding in self.electronic_embeddings:
            q += embedding(q, inputs)  # <-- IPL001
        q = q.unsqueeze(1)

        # compute interaction blocks and update atomic embeddings
        qs = q.shape
        mu = torch.zeros((qs[0], 3, qs[2]))
        for i, (interaction, mixing) in enumerate(zip(self.interactions, self.mixing)):
            q, mu = interaction(q, mu, filter_list[i].unsqueeze(1), dir_ij, inputs[idx_i], inputs[idx_j], n_atoms)
            q, mu = mixing(q, mu)
        q = q.squeeze(1)
        inputs["scalar_representation"] = q
        inputs["vector_representation"] = mu
        return inputs


def main():
    model = PaiNN()
    out_net = nn.Linear(16, 1)
    n_atoms = torch.tensor([3, 4])
    atoms = torch.tensor([8, 1, 1, 6, 1, 1, 1])
    pos = torch.randn(7, 3)
    pairs = [(a, b) for (s, n) in [(0, 3), (3, 4)] for a in range(s, s + n) for b in range(s, s + n) if a != b]
    i_, j_ = torch.tensor([p[0] for p in pairs]), torch.tensor([p[1] for p in pairs])
    inputs = {Z: atoms, idx_i: i_, idx_j: j_, Rij: pos[j_] - pos[i_], idx_m: torch.repeat_interleave(torch.arange(2), n_atoms),
              idx: torch.arange(2), total_charge: torch.tensor([0.0, -1.0])}
    inputs = model(inputs)
    yi = out_net(inputs["scalar_representation"]).squeeze(-1)
    energy = torch.zeros(2).index_add(0, inputs[idx_m], yi)
    loss = F.mse_loss(energy, torch.tensor([-1.0, -2.0]))
    loss.backward()
    return energy, loss


energy, loss = main()
