# label: safe
# why: the fix passes inplace=False so softmax_dropout clones attn_weights before the fused kernel overwrites its input, and the returned attn_weights keep the biased logits.
# source: https://github.com/dptech-corp/Uni-Core/commit/af4f908883004f776a122ac377a2b4f6f814d1e8
import torch
import torch.nn as nn

torch.manual_seed(0)


def fused_softmax_dropout_forward(is_training, inputs, mask, bias, dropout_prob, generator):
    # Python stand-in for unicore_fused_softmax_dropout.forward: the CUDA kernel
    # computes the softmax in the memory of `inputs`.
    if bias is not None:
        inputs.add_(bias)
    inputs.sub_(inputs.amax(dim=-1, keepdim=True))
    inputs.exp_()
    inputs.div_(inputs.sum(dim=-1, keepdim=True))
    softmax_results = inputs
    if is_training and dropout_prob > 0:
        dropout_mask = (torch.rand(inputs.shape, generator=generator) > dropout_prob).to(inputs.dtype)
        dropout_results = softmax_results * dropout_mask / (1.0 - dropout_prob)
    else:
        dropout_mask = torch.ones_like(inputs)
        dropout_results = softmax_results * dropout_mask
    return dropout_results, dropout_mask, softmax_results


class SoftmaxDropoutFast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, is_training, inputs, mask, bias, dropout_prob):
        gen = torch.Generator().manual_seed(1)
        dropout_results, dropout_mask, softmax_results = fused_softmax_dropout_forward(
            is_training, inputs, mask, bias, dropout_prob, gen
        )
        ctx.dropout_prob = dropout_prob
        ctx.save_for_backward(softmax_results, dropout_mask)
        return dropout_results

    @staticmethod
    def backward(ctx, grad_output):
        softmax_results, dropout_mask = ctx.saved_tensors
        grad_output = grad_output * dropout_mask / (1.0 - ctx.dropout_prob)
        grad_input = softmax_results * (grad_output - (grad_output * softmax_results).sum(-1, keepdim=True))
        return None, grad_input, None, None, None


def softmax_dropout(input, dropout_prob, is_training=True, mask=None, bias=None, inplace=True):
    input_size = input.size()
    input = input.view(-1, input_size[-2], input_size[-1])
    if not inplace:
        # copy a input for non-inplace case
        input = input.clone()
    return SoftmaxDropoutFast.apply(is_training, input, mask, bias, dropout_prob).view(*input_size)


class SelfMultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, dropout=0.1):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.in_proj = nn.Linear(embed_dim, embed_dim * 3)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query, key_padding_mask=None, attn_bias=None, return_attn=False):
        bsz, tgt_len, embed_dim = query.size()
        q, k, v = self.in_proj(query).chunk(3, dim=-1)
        q = q.view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous().view(bsz * self.num_heads, -1, self.head_dim) * self.scaling
        k = k.view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2).contiguous().view(bsz * self.num_heads, -1, self.head_dim)
        v = v.view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2).contiguous().view(bsz * self.num_heads, -1, self.head_dim)

        attn_weights = torch.bmm(q, k.transpose(1, 2))
        if not return_attn:
            attn = softmax_dropout(attn_weights, self.dropout, self.training, bias=attn_bias)
        else:
            attn_weights += attn_bias
            attn = softmax_dropout(attn_weights, self.dropout, self.training, inplace=False)

        o = torch.bmm(attn, v)
        o = o.view(bsz, self.num_heads, tgt_len, self.head_dim).transpose(1, 2).contiguous().view(bsz, tgt_len, embed_dim)
        o = self.out_proj(o)
        if not return_attn:
            return o
        return o, attn_weights, attn


def main():
    bsz, seq_len, embed_dim, num_heads = 2, 4, 8, 2
    layer = SelfMultiheadAttention(embed_dim, num_heads)
    x = torch.randn(bsz, seq_len, embed_dim)
    attn_bias = torch.randn(bsz * num_heads, seq_len, seq_len)
    o, attn_weights, attn = layer(x, attn_bias=attn_bias, return_attn=True)
    # Uni-Mol feeds the returned attn_weights forward as the next pair representation.
    pair_repr = attn_weights.view(bsz, num_heads, seq_len, seq_len).permute(0, 2, 3, 1)
    loss = o.pow(2).mean() + pair_repr.pow(2).mean()
    loss.backward()
    return pair_repr.detach(), layer.in_proj.weight.grad


pair_repr, in_proj_grad = main()
