# label: safe
# why: BiMultiHeadAttention masks the clamped attention logits with masked_fill_ after the transposed copy for the language branch was already computed; clamp saves its input and softmax runs after the fill, so no saved tensor is overwritten (the later fix only special-cased MPS).
# source: https://github.com/IDEA-Research/GroundingDINO/commit/0827fca7c7b687cd7a794746735e6db517df96a7 (pre-fix groundingdino/models/GroundingDINO/fuse_modules.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BiMultiHeadAttention(nn.Module):
    def __init__(self, v_dim, l_dim, embed_dim, num_heads, dropout=0.1, cfg=None):
        super(BiMultiHeadAttention, self).__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.v_dim = v_dim
        self.l_dim = l_dim
        self.scale = self.head_dim ** (-0.5)
        self.dropout = dropout

        self.v_proj = nn.Linear(self.v_dim, self.embed_dim)
        self.l_proj = nn.Linear(self.l_dim, self.embed_dim)
        self.values_v_proj = nn.Linear(self.v_dim, self.embed_dim)
        self.values_l_proj = nn.Linear(self.l_dim, self.embed_dim)
        self.out_v_proj = nn.Linear(self.embed_dim, self.v_dim)
        self.out_l_proj = nn.Linear(self.embed_dim, self.l_dim)

        self.stable_softmax_2d = True
        self.clamp_min_for_underflow = True
        self.clamp_max_for_overflow = True

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, v, l, attention_mask_v=None, attention_mask_l=None):
        bsz, tgt_len, _ = v.size()
        query_states = self.v_proj(v) * self.scale
        key_states = self._shape(self.l_proj(l), -1, bsz)
        value_v_states = self._shape(self.values_v_proj(v), -1, bsz)
        value_l_states = self._shape(self.values_l_proj(l), -1, bsz)

        proj_shape = (bsz * self.num_heads, -1, self.head_dim)
        query_states = self._shape(query_states, tgt_len, bsz).view(*proj_shape)
        key_states = key_states.view(*proj_shape)
        value_v_states = value_v_states.view(*proj_shape)
        value_l_states = value_l_states.view(*proj_shape)

        src_len = key_states.size(1)
        attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))  # bs*nhead, nimg, ntxt

        if self.stable_softmax_2d:
            attn_weights = attn_weights - attn_weights.max()
        if self.clamp_min_for_underflow:
            attn_weights = torch.clamp(attn_weights, min=-50000)
        if self.clamp_max_for_overflow:
            attn_weights = torch.clamp(attn_weights, max=50000)

        attn_weights_T = attn_weights.transpose(1, 2)
        attn_weights_l = attn_weights_T - torch.max(attn_weights_T, dim=-1, keepdim=True)[0]
        if self.clamp_min_for_underflow:
            attn_weights_l = torch.clamp(attn_weights_l, min=-50000)
        if self.clamp_max_for_overflow:
            attn_weights_l = torch.clamp(attn_weights_l, max=50000)

        # mask vison for language
        if attention_mask_v is not None:
            attention_mask_v = attention_mask_v[:, None, None, :].repeat(1, self.num_heads, 1, 1).flatten(0, 1)
            attn_weights_l.masked_fill_(attention_mask_v, float("-inf"))

        attn_weights_l = attn_weights_l.softmax(dim=-1)

        # mask language for vision
        if attention_mask_l is not None:
            attention_mask_l = attention_mask_l[:, None, None, :].repeat(1, self.num_heads, 1, 1).flatten(0, 1)
            attn_weights.masked_fill_(attention_mask_l, float("-inf"))
        attn_weights_v = attn_weights.softmax(dim=-1)

        attn_probs_v = F.dropout(attn_weights_v, p=self.dropout, training=self.training)
        attn_probs_l = F.dropout(attn_weights_l, p=self.dropout, training=self.training)

        attn_output_v = torch.bmm(attn_probs_v, value_l_states)
        attn_output_l = torch.bmm(attn_probs_l, value_v_states)

        attn_output_v = attn_output_v.view(bsz, self.num_heads, tgt_len, self.head_dim).transpose(1, 2)
        attn_output_v = attn_output_v.reshape(bsz, tgt_len, self.embed_dim)
        attn_output_l = attn_output_l.view(bsz, self.num_heads, src_len, self.head_dim).transpose(1, 2)
        attn_output_l = attn_output_l.reshape(bsz, src_len, self.embed_dim)

        attn_output_v = self.out_v_proj(attn_output_v)
        attn_output_l = self.out_l_proj(attn_output_l)
        return attn_output_v, attn_output_l


def main():
    attn = BiMultiHeadAttention(v_dim=16, l_dim=12, embed_dim=8, num_heads=2, dropout=0.0)
    v = torch.randn(2, 6, 16, requires_grad=True)
    l = torch.randn(2, 5, 12, requires_grad=True)
    # padded text tokens (True = masked) and padded image tokens
    attention_mask_l = torch.tensor([[False, False, False, True, True], [False, False, False, False, True]])
    attention_mask_v = torch.tensor([[False] * 5 + [True], [False] * 6])
    delta_v, delta_l = attn(v, l, attention_mask_v=attention_mask_v, attention_mask_l=attention_mask_l)
    loss = delta_v.pow(2).mean() + delta_l.pow(2).mean()
    loss.backward()
    return delta_v.detach(), delta_l.detach(), v.grad, l.grad, attn.l_proj.weight.grad


delta_v, delta_l, v_grad, l_grad, l_proj_grad = main()
