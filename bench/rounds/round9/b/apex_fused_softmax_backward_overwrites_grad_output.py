# label: hazard silent
# why: the fused scaled-masked-softmax backward writes the input gradient into the incoming output_grads buffer in place; that buffer is the same tensor autograd also hands to the residual-attention branch, which then back-propagates a corrupted gradient.
# source: https://github.com/NVIDIA/apex/issues/1430
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaledMaskedSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, mask, scale):
        scale_t = torch.tensor([scale])
        x = (inputs * scale).masked_fill(mask, -10000.0)
        softmax_results = torch.softmax(x, dim=-1)
        ctx.save_for_backward(softmax_results, scale_t)
        return softmax_results

    @staticmethod
    def backward(ctx, output_grads):
        softmax_results, scale_t = ctx.saved_tensors
        dot = (output_grads * softmax_results).sum(dim=-1, keepdim=True)
        output_grads.sub_(dot).mul_(softmax_results).mul_(scale_t)  # <-- IPL005: input grads written into the grad_output buffer
        return output_grads, None, None


class ResidualAttention(nn.Module):
    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.heads = heads
        self.d = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.prior = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, mask, prev_attn):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, self.d).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2)
        probs = ScaledMaskedSoftmax.apply(scores, mask, self.d ** -0.5)
        attn = probs + prev_attn  # residual attention: both branches receive the same grad tensor
        y = (attn @ v).transpose(1, 2).reshape(B, T, C)
        return self.out(y)


layer = ResidualAttention()
x = torch.randn(2, 4, 8)
mask = torch.zeros(2, 1, 4, 4, dtype=torch.bool)
mask[1, :, :, 3] = True
prev_logits = torch.randn(2, 2, 4, 4, requires_grad=True)
prev_attn = prev_logits.softmax(-1)
out = layer(x, mask, prev_attn)
loss = out.pow(2).mean()
loss.backward()
