# label: hazard silent
# why: LigerRMSNorm's in-place backward writes dX into dY, but in Gemma2's sandwich layout dY of the post-norm is the same gradient tensor the residual branch still needs, so the residual path silently receives the RMSNorm input-gradient instead.
# source: https://github.com/linkedin/Liger-Kernel/pull/376
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def rms_norm_forward(X, W, eps, offset):
    shape = X.shape
    X = X.view(-1, shape[-1])
    RSTD = torch.rsqrt(X.pow(2).mean(-1) + eps)
    Y = X * RSTD[:, None] * (offset + W)
    return Y.view(*shape), X, RSTD


def rms_norm_backward(dY, X, W, RSTD, offset, in_place):
    shape = dY.shape
    dY = dY.reshape(-1, shape[-1])
    if in_place is True:
        dX = dY
    else:
        dX = torch.zeros_like(dY)
    m = dY * (offset + W)
    dx_rows = RSTD[:, None] * m - (RSTD ** 3)[:, None] * X * (m * X).mean(-1, keepdim=True)
    dW = (dY * X * RSTD[:, None]).sum(0)
    dX.copy_(dx_rows)  # <-- IPL005
    return dX.view(*shape), dW


class LigerRMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, W, eps, offset=0.0, in_place=True):
        Y, X, RSTD = rms_norm_forward(X, W, eps, offset)
        ctx.offset, ctx.in_place = offset, in_place
        ctx.save_for_backward(X, W, RSTD)
        return Y

    @staticmethod
    def backward(ctx, dY):
        X, W, RSTD = ctx.saved_tensors
        dX, dW = rms_norm_backward(dY, X, W, RSTD, ctx.offset, ctx.in_place)
        return dX, dW, None, None, None


class LigerRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6, offset=1.0, in_place=True):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(hidden_size))
        self.eps, self.offset, self.in_place = eps, offset, in_place

    def forward(self, hidden_states):
        return LigerRMSNormFunction.apply(hidden_states, self.weight, self.eps, self.offset, self.in_place)


class Gemma2DecoderLayer(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.input_layernorm = LigerRMSNorm(hidden_size)
        self.self_attn = nn.Linear(hidden_size, hidden_size)
        self.post_attention_layernorm = LigerRMSNorm(hidden_size)
        self.pre_feedforward_layernorm = LigerRMSNorm(hidden_size)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 4 * hidden_size), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * hidden_size, hidden_size))
        self.post_feedforward_layernorm = LigerRMSNorm(hidden_size)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states)
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = residual + hidden_states

        residual = hidden_states
        hidden_states = self.pre_feedforward_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = self.post_feedforward_layernorm(hidden_states)
        hidden_states = residual + hidden_states
        return hidden_states


def main():
    layer = Gemma2DecoderLayer(8)
    embed = nn.Embedding(20, 8)
    input_ids = torch.randint(0, 20, (2, 5))
    out = layer(embed(input_ids))
    loss = F.mse_loss(out, torch.randn_like(out))
    loss.backward()
    return loss.detach(), embed.weight.grad.clone(), layer.self_attn.weight.grad.clone()


loss, embed_grad, attn_grad = main()
