# label: hazard raises
# why: the global-key slice of attn_probs is a narrow() view fed to matmul (and attn_probs itself is the saved softmax output), yet the layer then zeroes the global rows with attn_probs[is_index_global_attn_nonzero] = 0 before backward.
# source: https://github.com/huggingface/transformers/issues/12613 (fixed by https://github.com/huggingface/transformers/pull/13613)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class LongformerSelfAttention(nn.Module):
    def __init__(self, embed_dim=8, num_heads=2, one_sided_window=1):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.embed_dim = embed_dim
        self.w = one_sided_window
        self.query = nn.Linear(embed_dim, embed_dim)
        self.key = nn.Linear(embed_dim, embed_dim)
        self.value = nn.Linear(embed_dim, embed_dim)

    def _local_scores(self, q, k):
        # dense stand-in for the sliding-chunk matmul: scores for offsets -w..w
        bsz, seq_len, heads, dim = q.shape
        k_pad = nn.functional.pad(k, (0, 0, 0, 0, self.w, self.w))
        cols = [(q * k_pad[:, i:i + seq_len]).sum(-1) for i in range(2 * self.w + 1)]
        return torch.stack(cols, dim=-1)

    def _local_output(self, probs, v):
        bsz, seq_len, heads, dim = v.shape
        v_pad = nn.functional.pad(v, (0, 0, 0, 0, self.w, self.w))
        out = 0
        for i in range(2 * self.w + 1):
            out = out + probs[..., i:i + 1] * v_pad[:, i:i + seq_len]
        return out

    def forward(self, hidden_states, is_index_global_attn):
        bsz, seq_len, _ = hidden_states.shape
        q = self.query(hidden_states) / math.sqrt(self.head_dim)
        k = self.key(hidden_states)
        v = self.value(hidden_states)
        q = q.view(bsz, seq_len, self.num_heads, self.head_dim)
        k = k.view(bsz, seq_len, self.num_heads, self.head_dim)
        v = v.view(bsz, seq_len, self.num_heads, self.head_dim)

        is_index_global_attn_nonzero = is_index_global_attn.nonzero(as_tuple=True)
        max_num_global_attn_indices = int(is_index_global_attn.sum(-1).max())
        key_only_global = k.new_zeros(bsz, max_num_global_attn_indices, self.num_heads, self.head_dim)
        value_only_global = v.new_zeros(bsz, max_num_global_attn_indices, self.num_heads, self.head_dim)
        slot = torch.arange(max_num_global_attn_indices).expand(bsz, -1)
        key_only_global[slot < is_index_global_attn.sum(-1, keepdim=True)] = k[is_index_global_attn_nonzero]
        value_only_global[slot < is_index_global_attn.sum(-1, keepdim=True)] = v[is_index_global_attn_nonzero]

        # attention from every token to the global tokens, concatenated in front of the local scores
        global_key_scores = torch.einsum("blhd,bshd->blhs", q, key_only_global)
        attn_scores = torch.cat((global_key_scores, self._local_scores(q, k)), dim=-1)
        attn_probs = nn.functional.softmax(attn_scores, dim=-1)

        # _compute_attn_output_with_global_indices
        attn_probs_only_global = attn_probs.narrow(-1, 0, max_num_global_attn_indices)
        attn_output_only_global = torch.matmul(
            attn_probs_only_global.transpose(1, 2), value_only_global.transpose(1, 2)
        ).transpose(1, 2)
        attn_probs_without_global = attn_probs.narrow(-1, max_num_global_attn_indices, 2 * self.w + 1).contiguous()
        attn_output = attn_output_only_global + self._local_output(attn_probs_without_global, v)

        # global tokens attend to everything; their rows of the local probs are discarded
        attn_output = attn_output.reshape(bsz, seq_len, self.embed_dim)
        attn_probs[is_index_global_attn_nonzero] = 0  # <-- IPL001: attn_probs is the saved softmax output and its narrow() view was saved by matmul
        return attn_output, attn_probs


layer = LongformerSelfAttention()
hidden_states = torch.randn(1, 6, 8, requires_grad=True)
is_index_global_attn = torch.tensor([[True, False, False, False, False, False]])
attn_output, attentions = layer(hidden_states, is_index_global_attn)
loss = attn_output.pow(2).sum()
loss.backward()
