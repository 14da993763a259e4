# label: safe
# why: attention_mask_func fills the fresh scaled scores in place before the softmax, and the post-softmax mask is applied out of place, so no tensor that a backward formula saved is ever modified.
# source: https://github.com/NVIDIA/Megatron-LM/pull/731
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def attention_mask_func(attention_scores, attention_mask):
    attention_scores.masked_fill_(attention_mask, -10000.0)
    return attention_scores


class FusedScaleMaskSoftmax(nn.Module):
    """fused operation: scaling + mask + softmax (torch fallback path only)."""

    def __init__(self, input_in_fp16, input_in_bf16, mask_func, softmax_in_fp32, scale):
        super(FusedScaleMaskSoftmax, self).__init__()
        self.input_in_fp16 = input_in_fp16
        self.input_in_bf16 = input_in_bf16
        self.input_in_float16 = self.input_in_fp16 or self.input_in_bf16
        self.mask_func = mask_func
        self.softmax_in_fp32 = softmax_in_fp32
        self.scale = scale

    def forward(self, input, mask):
        assert input.dim() == 4
        return self.forward_torch_softmax(input, mask)

    def forward_torch_softmax(self, input, mask):
        if self.input_in_float16 and self.softmax_in_fp32:
            input = input.float()

        if self.scale is not None:
            input = input * self.scale
        mask_output = self.mask_func(input, mask) if mask is not None else input
        probs = torch.nn.Softmax(dim=-1)(mask_output)
        if mask is not None:
            probs = probs * (~mask)

        if self.input_in_float16 and self.softmax_in_fp32:
            if self.input_in_fp16:
                probs = probs.half()
            else:
                probs = probs.bfloat16()

        return probs


class CoreAttention(nn.Module):
    def __init__(self, hidden_size=8, num_heads=2, layer_number=2):
        super().__init__()
        self.hidden_size_per_attention_head = hidden_size // num_heads
        self.num_heads = num_heads
        coeff = layer_number
        self.norm_factor = math.sqrt(self.hidden_size_per_attention_head) * coeff
        self.scale_mask_softmax = FusedScaleMaskSoftmax(False, False, attention_mask_func, True, coeff)
        self.attention_dropout = nn.Dropout(0.0)

    def forward(self, query_layer, key_layer, value_layer, attention_mask):
        # [sq, b, np, hn] -> [b, np, sq, sk]
        sq, b, np_, hn = query_layer.shape
        sk = key_layer.shape[0]
        query_layer = query_layer.reshape(sq, b * np_, hn)
        key_layer = key_layer.reshape(sk, b * np_, hn)
        matmul_input_buffer = torch.zeros(b * np_, sq, sk)
        matmul_result = torch.baddbmm(
            matmul_input_buffer,
            query_layer.transpose(0, 1),
            key_layer.transpose(0, 1).transpose(1, 2),
            beta=0.0, alpha=(1.0 / self.norm_factor))
        attention_scores = matmul_result.view(b, np_, sq, sk)
        attention_probs = self.scale_mask_softmax(attention_scores, attention_mask)
        attention_probs = self.attention_dropout(attention_probs)
        value_layer = value_layer.reshape(sk, b * np_, hn)
        attention_probs = attention_probs.view(b * np_, sq, sk)
        context_layer = torch.bmm(attention_probs, value_layer.transpose(0, 1))
        context_layer = context_layer.view(b, np_, sq, hn).permute(2, 0, 1, 3).contiguous()
        return context_layer.view(sq, b, np_ * hn)


attn = CoreAttention()
sq, b = 5, 2
qkv = nn.Linear(8, 24)
hidden = torch.randn(sq, b, 8)
q, k, v = qkv(hidden).view(sq, b, 2, 12).split(4, dim=-1)
attention_mask = torch.triu(torch.ones(sq, sq, dtype=torch.bool), diagonal=1).view(1, 1, sq, sq)
context = attn(q, k, v, attention_mask)
loss = context.pow(2).mean()
loss.backward()
