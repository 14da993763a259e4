# label: hazard raises
# why: turning the no-op attention_probs.masked_fill(...) into the suggested in-place masked_fill_ overwrites the softmax output, which softmax's backward needs, so fine-tuning DeBERTa fails in backward.
# source: https://github.com/huggingface/transformers/issues/35162
import torch
import torch.nn as nn

torch.manual_seed(0)


class DisentangledSelfAttention(nn.Module):
    def __init__(self, hidden_size=8, num_attention_heads=2, attention_probs_dropout_prob=0.1):
        super().__init__()
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = hidden_size // num_attention_heads
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query_proj = nn.Linear(hidden_size, self.all_head_size, bias=True)
        self.key_proj = nn.Linear(hidden_size, self.all_head_size, bias=True)
        self.value_proj = nn.Linear(hidden_size, self.all_head_size, bias=True)
        self.dropout = nn.Dropout(attention_probs_dropout_prob)

    def transpose_for_scores(self, x, attention_heads):
        new_x_shape = x.size()[:-1] + (attention_heads, -1)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3).contiguous().view(-1, x.size(1), x.size(-1))

    def forward(self, hidden_states, attention_mask):
        query_layer = self.transpose_for_scores(self.query_proj(hidden_states), self.num_attention_heads)
        key_layer = self.transpose_for_scores(self.key_proj(hidden_states), self.num_attention_heads)
        value_layer = self.transpose_for_scores(self.value_proj(hidden_states), self.num_attention_heads)

        scale_factor = 1
        scale = torch.sqrt(torch.tensor(query_layer.size(-1), dtype=torch.float) * scale_factor)
        attention_scores = torch.bmm(query_layer, key_layer.transpose(-1, -2) / scale.to(dtype=query_layer.dtype))
        attention_scores = attention_scores.view(
            -1, self.num_attention_heads, attention_scores.size(-2), attention_scores.size(-1)
        )

        attention_mask = attention_mask.bool()
        attention_scores = attention_scores.masked_fill(~(attention_mask), torch.finfo(query_layer.dtype).min)
        # bsz x height x length x dimension
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        attention_probs.masked_fill_(attention_mask, 0)  # <-- IPL001: overwrites the softmax output saved for backward
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.bmm(
            attention_probs.view(-1, attention_probs.size(-2), attention_probs.size(-1)), value_layer
        )
        context_layer = (
            context_layer.view(-1, self.num_attention_heads, context_layer.size(-2), context_layer.size(-1))
            .permute(0, 2, 1, 3)
            .contiguous()
        )
        new_context_layer_shape = context_layer.size()[:-2] + (-1,)
        return context_layer.view(new_context_layer_shape)


def get_attention_mask(attention_mask):
    extended_attention_mask = attention_mask.unsqueeze(1).unsqueeze(2)
    return extended_attention_mask * extended_attention_mask.squeeze(-2).unsqueeze(-1)


attn = DisentangledSelfAttention()
attn.train()
hidden_states = torch.randn(2, 5, 8)
input_mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]])
context = attn(hidden_states, get_attention_mask(input_mask))
loss = context.pow(2).mean()
loss.backward()
