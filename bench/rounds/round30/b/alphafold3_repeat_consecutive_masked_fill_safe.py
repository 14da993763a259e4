# label: safe
# why: `indices.masked_fill_` writes into an integer index tensor that repeat_consecutive_with_lens just built locally; nothing saved it for backward and the caller never sees it, so the in-place fill is harmless.
# source: https://github.com/lucidrains/alphafold3-pytorch/commit/565577a5b196d8b516b137fe7500a3ecb845f845
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def lens_to_mask(lens, max_len=None):
    max_len = max_len if max_len is not None else int(lens.amax())
    arange = torch.arange(max_len)
    return arange[None, ...] < lens[..., None]


def repeat_consecutive_with_lens(feats, lens):
    batch, seq, *dims = feats.shape

    # get mask from lens
    mask = lens_to_mask(lens)

    # derive arange
    window_size = mask.shape[-1]
    arange = torch.arange(window_size)

    cumsum_len = lens.cumsum(dim=-1)
    offsets = F.pad(cumsum_len, (1, -1), value=0)
    indices = arange[None, None, :] + offsets[..., None]

    # create output tensor + a sink position on the very right (index max_len)
    total_lens = lens.sum(dim=-1)
    output_mask = lens_to_mask(total_lens)

    max_len = int(total_lens.amax())

    output_indices = torch.zeros((batch, max_len + 1), dtype=torch.long)

    indices.masked_fill_(~mask, max_len)  # scatter to sink position for padding
    indices = indices.reshape(batch, -1)

    # scatter
    seq_arange = torch.arange(seq).repeat_interleave(window_size)
    output_indices = output_indices.scatter(1, indices, seq_arange[None].expand(batch, -1))

    # remove sink
    output_indices = output_indices[:, :-1]

    # gather
    output = feats.gather(1, output_indices[..., None].expand(-1, -1, *dims))

    # final mask
    return output * output_mask[..., None]


class SingleToAtom(nn.Module):
    def __init__(self, dim_single=8, dim_atom=4):
        super().__init__()
        self.proj = nn.Linear(dim_single, dim_atom)

    def forward(self, single_repr, residue_atom_lens):
        single_to_atom = self.proj(single_repr)
        return repeat_consecutive_with_lens(single_to_atom, residue_atom_lens)


def main():
    module = SingleToAtom()
    single_repr = torch.randn(2, 3, 8, requires_grad=True)
    residue_atom_lens = torch.tensor([[2, 1, 3], [1, 1, 2]])
    atom_feats = module(single_repr, residue_atom_lens)
    loss = atom_feats.pow(2).sum()
    loss.backward()
    return atom_feats.detach(), single_repr.grad, module.proj.weight.grad


atom_feats, single_grad, proj_grad = main()
