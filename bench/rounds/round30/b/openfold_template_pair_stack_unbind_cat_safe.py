# label: safe
# why: the fix unbinds z into per-template tensors, rebinds `single` out of place and rebuilds z with torch.cat, so no tensor saved for backward is overwritten; the only in-place op (masking the freshly built bias) touches a tensor nothing saved.
# source: https://github.com/aqlaboratory/openfold/commit/d5480cbe6916cd492b81f4b57b0bd0ac175ae9d4
import torch
import torch.nn as nn

torch.manual_seed(0)


class TriangleAttention(nn.Module):
    def __init__(self, c_in, c_hidden, no_heads=2, inf=1e9):
        super().__init__()
        self.inf = inf
        self.layer_norm = nn.LayerNorm(c_in)
        self.linear_q = nn.Linear(c_in, c_hidden * no_heads, bias=False)
        self.linear_k = nn.Linear(c_in, c_hidden * no_heads, bias=False)
        self.linear_v = nn.Linear(c_in, c_hidden * no_heads, bias=False)
        self.linear_o = nn.Linear(c_hidden * no_heads, c_in)

    def forward(self, x, mask=None):
        if mask is None:
            mask = x.new_ones(x.shape[:-1])
        mask_bias = mask[..., None, :] - 1
        mask_bias *= self.inf
        x = self.layer_norm(x)
        q, k, v = self.linear_q(x), self.linear_k(x), self.linear_v(x)
        a = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5 + mask_bias, dim=-1)
        return self.linear_o(a @ v)


class PairTransition(nn.Module):
    def __init__(self, c_z, n=2):
        super().__init__()
        self.layer_norm = nn.LayerNorm(c_z)
        self.linear_1 = nn.Linear(c_z, n * c_z)
        self.relu = nn.ReLU()
        self.linear_2 = nn.Linear(n * c_z, c_z)

    def forward(self, z, mask=None):
        z = self.layer_norm(z)
        z = self.linear_2(self.relu(self.linear_1(z)))
        if mask is not None:
            z = z * mask[..., None]
        return z


class TemplatePairStackBlock(nn.Module):
    def __init__(self, c_t, c_hidden_tri_att, no_heads, dropout_rate=0.0):
        super().__init__()
        self.dropout_row = nn.Dropout(dropout_rate)
        self.tri_att_start = TriangleAttention(c_t, c_hidden_tri_att, no_heads)
        self.tri_att_end = TriangleAttention(c_t, c_hidden_tri_att, no_heads)
        self.pair_transition = PairTransition(c_t)

    def forward(self, z, mask, chunk_size=None, _mask_trans=True):
        single_templates = [t.unsqueeze(-4) for t in torch.unbind(z, dim=-4)]
        single_templates_masks = [m.unsqueeze(-3) for m in torch.unbind(mask, dim=-3)]
        for i in range(len(single_templates)):
            single = single_templates[i]
            single_mask = single_templates_masks[i]

            single = single + self.dropout_row(self.tri_att_start(single, mask=single_mask))
            single = single + self.dropout_row(
                self.tri_att_end(single.transpose(-2, -3), mask=single_mask.transpose(-1, -2)).transpose(-2, -3)
            )
            single = single + self.pair_transition(single, mask=single_mask if _mask_trans else None)

            single_templates[i] = single

        z = torch.cat(single_templates, dim=-4)
        return z


def main():
    n_templ, n_res, c_t = 2, 5, 8
    template_embedder = nn.Linear(4, c_t)
    block = TemplatePairStackBlock(c_t=c_t, c_hidden_tri_att=4, no_heads=2)

    template_feats = torch.randn(1, n_templ, n_res, n_res, 4)
    mask = torch.ones(1, n_templ, n_res, n_res)
    mask[..., -1] = 0

    t = template_embedder(template_feats)
    t = block(t, mask)
    loss = t.pow(2).mean()
    loss.backward()
    return loss.detach(), template_embedder.weight.grad


loss, grad = main()
