# label: safe
# why: `q *= scale` writes into the fresh output of linear_q and `a += bias` into the fresh output of matmul; neither addmm nor matmul saves its own output for backward and no alias is read later, so these in-place ops do not change gradients.
# source: https://github.com/aqlaboratory/openfold/commit/ab0c697 (pre-change MSAColumnGlobalAttention.global_attention in openfold/model/msa.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class MSAColumnGlobalAttention(nn.Module):
    def __init__(self, c_in, c_hidden, no_heads, inf=1e9, eps=1e-10):
        super().__init__()
        self.c_in = c_in
        self.c_hidden = c_hidden
        self.no_heads = no_heads
        self.inf = inf
        self.eps = eps
        self.layer_norm_m = nn.LayerNorm(c_in)
        self.linear_q = nn.Linear(c_in, c_hidden * no_heads, bias=False)
        self.linear_k = nn.Linear(c_in, c_hidden, bias=False)
        self.linear_v = nn.Linear(c_in, c_hidden, bias=False)
        self.linear_g = nn.Linear(c_in, c_hidden * no_heads)
        self.linear_o = nn.Linear(c_hidden * no_heads, c_in)
        self.sigmoid = nn.Sigmoid()
        self.softmax = nn.Softmax(dim=-1)

    def global_attention(self, m, mask):
        # [*, N_res, C_in]
        q = (torch.sum(m * mask.unsqueeze(-1), dim=-2) /
             (torch.sum(mask, dim=-1)[..., None] + self.eps))

        # [*, N_res, H * C_hidden]
        q = self.linear_q(q)
        q *= self.c_hidden ** (-0.5)

        # [*, N_res, H, C_hidden]
        q = q.view(*q.shape[:-1], self.no_heads, -1)

        # [*, N_res, N_seq, C_hidden]
        k = self.linear_k(m)
        v = self.linear_v(m)

        # [*, N_res, H, N_seq]
        a = torch.matmul(q, k.transpose(-1, -2))
        bias = (self.inf * (mask - 1))[..., :, None, :]
        a += bias
        a = self.softmax(a)

        # [*, N_res, H, C_hidden]
        o = torch.matmul(a, v)

        # [*, N_res, N_seq, C_hidden]
        g = self.sigmoid(self.linear_g(m))
        g = g.view(*g.shape[:-1], self.no_heads, -1)

        o = o.unsqueeze(-3) * g
        o = o.reshape(*o.shape[:-2], -1)
        return self.linear_o(o)

    def forward(self, m, mask=None):
        if mask is None:
            mask = m.new_ones(m.shape[:-1])
        # [*, N_res, N_seq, C_in]
        m = m.transpose(-2, -3)
        mask = mask.transpose(-1, -2)
        m = self.layer_norm_m(m)
        m = self.global_attention(m=m, mask=mask)
        # [*, N_seq, N_res, C_in]
        return m.transpose(-2, -3)


def main():
    n_seq, n_res, c_m = 4, 6, 8
    attn = MSAColumnGlobalAttention(c_in=c_m, c_hidden=4, no_heads=2)
    m = torch.randn(1, n_seq, n_res, c_m, requires_grad=True)
    msa_mask = torch.ones(1, n_seq, n_res)
    msa_mask[:, -1, :3] = 0
    out = m + attn(m, mask=msa_mask)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), m.grad, attn.linear_q.weight.grad


loss, m_grad, q_grad = main()
