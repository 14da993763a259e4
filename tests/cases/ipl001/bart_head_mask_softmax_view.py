# label: hazard raises
# why: attn_probs is a view of the softmax output; multiplying it in place by the head mask overwrites what softmax saved for backward
import torch
import torch.nn as nn

torch.manual_seed(0)


class BartStyleAttention(nn.Module):
    def __init__(self, embed_dim=16, num_heads=4):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def _shape(self, t, bsz):
        return t.view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2).reshape(bsz * self.num_heads, -1, self.head_dim)

    def forward(self, hidden, layer_head_mask):
        bsz, tgt_len, embed_dim = hidden.shape
        q = self._shape(self.q_proj(hidden) * self.head_dim**-0.5, bsz)
        k = self._shape(self.k_proj(hidden), bsz)
        v = self._shape(self.v_proj(hidden), bsz)
        attn_weights = torch.bmm(q, k.transpose(1, 2)).softmax(dim=-1)
        attn_probs = attn_weights.view(bsz, self.num_heads, tgt_len, tgt_len)
        attn_probs.mul_(layer_head_mask.view(1, -1, 1, 1))  # <-- IPL001
        attn_output = torch.bmm(attn_weights, v)
        attn_output = attn_output.view(bsz, self.num_heads, tgt_len, self.head_dim).transpose(1, 2)
        return self.out_proj(attn_output.reshape(bsz, tgt_len, embed_dim))


attn = BartStyleAttention()
hidden = torch.randn(2, 5, 16)
head_mask = torch.tensor([1.0, 0.0, 1.0, 1.0])
out = attn(hidden, head_mask)
loss = out.pow(2).mean()
loss.backward()
grad_q = attn.q_proj.weight.grad.clone()
