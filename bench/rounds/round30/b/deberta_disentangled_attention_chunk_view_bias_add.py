# label: hazard raises
# why: query_layer and value_layer are outputs of `.chunk(3, dim=-1)` on the fused in_proj projection (multi-output views), and `query_layer += q_bias` modifies such a view in place, which autograd refuses (the fused projection's backward cannot be rebased).
# source: https://github.com/huggingface/transformers/issues/8022
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class DebertaConfig:
    hidden_size = 16
    num_attention_heads = 2
    attention_probs_dropout_prob = 0.0
    relative_attention = False
    pos_att_type = ["c2p", "p2c"]
    talking_head = False


class DisentangledSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = int(config.hidden_size / config.num_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.in_proj = nn.Linear(config.hidden_size, self.all_head_size * 3, bias=False)
        self.q_bias = nn.Parameter(torch.zeros((self.all_head_size), dtype=torch.float))
        self.v_bias = nn.Parameter(torch.zeros((self.all_head_size), dtype=torch.float))
        self.pos_att_type = config.pos_att_type
        self.relative_attention = config.relative_attention
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, -1)
        x = x.view(*new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask, return_att=False, query_states=None):
        if query_states is None:
            qp = self.in_proj(hidden_states)  # .split(self.all_head_size, dim=-1)
            query_layer, key_layer, value_layer = self.transpose_for_scores(qp).chunk(3, dim=-1)
        else:
            raise NotImplementedError

        query_layer += self.transpose_for_scores(self.q_bias.unsqueeze(0).unsqueeze(0))  # <-- IPL001
        value_layer += self.transpose_for_scores(self.v_bias.unsqueeze(0).unsqueeze(0))  # <-- IPL001

        # Take the dot product between "query" and "key" to get the raw attention scores.
        scale_factor = 1
        if "c2p" in self.pos_att_type:
            scale_factor += 1
        if "p2c" in self.pos_att_type:
            scale_factor += 1
        scale = math.sqrt(query_layer.size(-1) * scale_factor)
        query_layer = query_layer / scale
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores.masked_fill(~attention_mask.bool(), float("-inf"))
        attention_probs = torch.softmax(attention_scores, -1)
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (-1,)
        return context_layer.view(*new_context_layer_shape)


def main():
    config = DebertaConfig()
    attn = DisentangledSelfAttention(config)
    hidden_states = torch.randn(2, 5, config.hidden_size)
    input_mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    attention_mask = (input_mask[:, None, None, :] * input_mask[:, None, :, None]) + torch.eye(5)[None, None]
    out = attn(hidden_states, attention_mask.clamp(max=1))
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), attn.in_proj.weight.grad, attn.q_bias.grad


loss, in_proj_grad, q_bias_grad = main()
