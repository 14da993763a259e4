# label: hazard silent
# why: Alphafold3.forward offsets `residue_atom_indices` with `+=`, mutating the caller's batch tensor, so a second forward on the same batch (next step / eval) gathers the wrong representative atoms.
# source: https://github.com/lucidrains/alphafold3-pytorch/commit/565577a5b196d8b516b137fe7500a3ecb845f845
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def lens_to_mask(lens, max_len=None):
    max_len = max_len if max_len is not None else int(lens.amax())
    arange = torch.arange(max_len)
    return arange[None, :] < lens[..., None]


class Alphafold3(nn.Module):
    def __init__(self, dim_atom_inputs=4, dim_atom=8):
        super().__init__()
        self.atom_embed = nn.Linear(dim_atom_inputs, dim_atom)
        self.to_coords = nn.Linear(dim_atom, 3)

    def forward(self, atom_inputs, residue_atom_lens, residue_atom_indices=None, atom_pos=None):
        atom_seq_len = atom_inputs.shape[-2]

        total_atoms = residue_atom_lens.sum(dim=-1)
        atom_mask = lens_to_mask(total_atoms, max_len=atom_seq_len)

        # handle offsets for residue atom indices

        if residue_atom_indices is not None:
            residue_atom_indices += F.pad(residue_atom_lens, (-1, 1), value=0)  # <-- IPL004

        atom_feats = self.atom_embed(atom_inputs)
        pred_atom_pos = self.to_coords(atom_feats) * atom_mask[..., None]

        # distogram-style loss on one representative atom per residue
        idx = residue_atom_indices[..., None].expand(-1, -1, 3)
        pred_rep = pred_atom_pos.gather(1, idx)
        true_rep = atom_pos.gather(1, idx)
        pred_dist = torch.cdist(pred_rep, pred_rep)
        true_dist = torch.cdist(true_rep, true_rep)
        return F.mse_loss(pred_dist, true_dist)


def main():
    model = Alphafold3()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    batch = dict(
        atom_inputs=torch.randn(2, 8, 4),
        residue_atom_lens=torch.tensor([[2, 2, 2, 2], [2, 2, 2, 2]]),
        residue_atom_indices=torch.tensor([[0, 1, 0, 1], [1, 0, 1, 0]]),
        atom_pos=torch.randn(2, 8, 3),
    )

    losses = []
    for _ in range(2):
        loss = model(**batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses), batch['residue_atom_indices']


losses, residue_atom_indices = main()
