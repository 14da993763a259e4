# label: hazard silent
# why: FFTransformerDecoder adds the positional embeddings to its input with +=, so the caller's len_regulated tensor is silently overwritten with input+pos_emb.
# source: https://github.com/NVIDIA-NeMo/Speech/pull/7440
import torch
import torch.nn as nn

torch.manual_seed(0)


def mask_from_lens(lens, max_len=None):
    if max_len is None:
        max_len = lens.max()
    ids = torch.arange(0, max_len, device=lens.device, dtype=lens.dtype)
    mask = torch.lt(ids, lens.unsqueeze(1))
    return mask


class PositionalEmbedding(nn.Module):
    def __init__(self, demb):
        super(PositionalEmbedding, self).__init__()
        self.demb = demb
        inv_freq = 1 / (10000 ** (torch.arange(0.0, demb, 2.0) / demb))
        self.register_buffer('inv_freq', inv_freq)

    def forward(self, pos_seq, bsz=None):
        sinusoid_inp = torch.matmul(torch.unsqueeze(pos_seq, -1), torch.unsqueeze(self.inv_freq, 0))
        pos_emb = torch.cat([sinusoid_inp.sin(), sinusoid_inp.cos()], dim=1)
        if bsz is not None:
            return pos_emb[None, :, :].repeat(bsz, 1, 1)
        else:
            return pos_emb[None, :, :]


class TransformerLayer(nn.Module):
    def __init__(self, d_model, n_head, d_inner, dropout=0.0):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_head, dropout=dropout, batch_first=True)
        self.ln1 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_inner), nn.ReLU(), nn.Linear(d_inner, d_model))
        self.ln2 = nn.LayerNorm(d_model)

    def forward(self, dec_inp, mask=None):
        out, _ = self.attn(dec_inp, dec_inp, dec_inp, key_padding_mask=~mask.squeeze(2))
        out = self.ln1(dec_inp + out) * mask
        out = self.ln2(out + self.ff(out)) * mask
        return out


class FFTransformerDecoder(nn.Module):
    def __init__(self, n_layer=2, n_head=2, d_model=8, d_inner=16, dropout=0.0):
        super(FFTransformerDecoder, self).__init__()
        self.d_model = d_model
        self.pos_emb = PositionalEmbedding(self.d_model)
        self.drop = nn.Dropout(dropout)
        self.layers = nn.ModuleList([TransformerLayer(d_model, n_head, d_inner, dropout) for _ in range(n_layer)])

    def forward(self, input, seq_lens, conditioning=None):
        return self._forward(input, mask_from_lens(seq_lens).unsqueeze(2), conditioning)

    def _forward(self, inp, mask, conditioning):
        pos_seq = torch.arange(inp.size(1), device=inp.device).to(inp.dtype)
        pos_emb = self.pos_emb(pos_seq) * mask
        inp += pos_emb  # <-- IPL004: adds into the caller's tensor instead of a new one
        out = self.drop(inp)
        for layer in self.layers:
            out = layer(out, mask=mask)
        return out, mask


def regulate_len(durations, enc_out, pace: float = 1.0):
    """Upsample each token's encoder output by its (integer) duration."""
    reps = (durations.float() / pace + 0.5).long()
    dec_lens = reps.sum(dim=1)
    max_len = int(dec_lens.max())
    reps_cumsum = torch.cumsum(torch.nn.functional.pad(reps, (1, 0, 0, 0), value=0.0), dim=1)[:, None, :]
    range_ = torch.arange(max_len)[None, :, None]
    mult = ((reps_cumsum[:, :, :-1] <= range_) & (reps_cumsum[:, :, 1:] > range_)).float()
    enc_rep = torch.matmul(mult, enc_out)
    return enc_rep, dec_lens


decoder = FFTransformerDecoder()
proj = nn.Linear(8, 5)
enc_out = torch.randn(2, 3, 8, requires_grad=True)
durs = torch.tensor([[1, 2, 1], [2, 1, 0]])
len_regulated, dec_lens = regulate_len(durs, enc_out)
dec_out, _ = decoder(input=len_regulated, seq_lens=dec_lens)
spect = proj(dec_out).transpose(1, 2)
loss = spect.pow(2).mean()
loss.backward()
