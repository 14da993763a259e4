# label: safe
# why: the mask is written through attn.data before softmax, but softmax saves only its output and the masked entries get zero gradient anyway, so gradients match the out-of-place masked_fill
# source: https://github.com/jadore801120/attention-is-all-you-need-pytorch/issues/16
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaledDotProductAttention(nn.Module):
    def __init__(self, d_model, attn_dropout=0.0):
        super().__init__()
        self.temper = np.power(d_model, 0.5)
        self.dropout = nn.Dropout(attn_dropout)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, q, k, v, attn_mask=None):
        attn = torch.bmm(q, k.transpose(1, 2)) / self.temper
        if attn_mask is not None:
            assert attn_mask.size() == attn.size()
            attn.data.masked_fill_(attn_mask, -float('inf'))
        attn = self.softmax(attn)
        attn = self.dropout(attn)
        output = torch.bmm(attn, v)
        return output, attn


class MultiHeadAttention(nn.Module):
    def __init__(self, n_head, d_model, d_k):
        super().__init__()
        self.n_head = n_head
        self.d_k = d_k
        self.w_qs = nn.Parameter(torch.randn(n_head, d_model, d_k) * 0.1)
        self.w_ks = nn.Parameter(torch.randn(n_head, d_model, d_k) * 0.1)
        self.w_vs = nn.Parameter(torch.randn(n_head, d_model, d_k) * 0.1)
        self.attention = ScaledDotProductAttention(d_model)
        self.proj = nn.Linear(n_head * d_k, d_model)

    def forward(self, q, k, v, attn_mask=None):
        mb_size, len_q, d_model = q.size()
        len_k = k.size(1)
        q_s = q.repeat(self.n_head, 1, 1).view(self.n_head, -1, d_model)
        k_s = k.repeat(self.n_head, 1, 1).view(self.n_head, -1, d_model)
        v_s = v.repeat(self.n_head, 1, 1).view(self.n_head, -1, d_model)
        q_s = torch.bmm(q_s, self.w_qs).view(-1, len_q, self.d_k)
        k_s = torch.bmm(k_s, self.w_ks).view(-1, len_k, self.d_k)
        v_s = torch.bmm(v_s, self.w_vs).view(-1, len_k, self.d_k)
        outputs, attns = self.attention(q_s, k_s, v_s, attn_mask=attn_mask.repeat(self.n_head, 1, 1))
        outputs = torch.cat(torch.split(outputs, mb_size, dim=0), dim=-1)
        return self.proj(outputs), attns


def get_attn_padding_mask(seq_q, seq_k):
    mb_size, len_q = seq_q.size()
    mb_size, len_k = seq_k.size()
    pad_attn_mask = seq_k.eq(0).unsqueeze(1)
    return pad_attn_mask.expand(mb_size, len_q, len_k)


mha = MultiHeadAttention(n_head=2, d_model=8, d_k=4)
src_seq = torch.tensor([[3, 5, 7, 0], [2, 4, 0, 0]])
enc_input = torch.randn(2, 4, 8)
mask = get_attn_padding_mask(src_seq, src_seq)
enc_output, enc_attn = mha(enc_input, enc_input, enc_input, attn_mask=mask)
loss = enc_output.pow(2).sum()
loss.backward()
