# label: safe
# why: HGRNAttention masks left padding with i.mul_(mask), but i is the output of the custom SwiGLUFunction, which saved only its inputs (x, y) for backward, so overwriting its output in place leaves every saved tensor intact.
# source: https://github.com/fla-org/flash-linear-attention/commit/b23de6aaf029b86ffd1a61505105dc236b78a97d ("[Misc] Avoid inplace mul", pre-change fla/layers/hgrn.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SwiGLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * torch.sigmoid(x) * y

    @staticmethod
    def backward(ctx, dout):
        x, y = ctx.saved_tensors
        sig = torch.sigmoid(x)
        dx = dout * y * (sig + x * sig * (1 - sig))
        dy = dout * x * sig
        return dx, dy


def swiglu(x, y):
    return SwiGLUFunction.apply(x, y)


def naive_recurrent_hgrn(x, g, initial_state=None, output_final_state=False):
    # h_t = exp(g_t) * h_{t-1} + x_t
    B, T, D = x.shape
    h = x.new_zeros(B, D) if initial_state is None else initial_state
    o = []
    for t in range(T):
        h = g[:, t].exp() * h + x[:, t]
        o.append(h)
    return torch.stack(o, dim=1), (h if output_final_state else None)


class HGRNAttention(nn.Module):
    def __init__(self, hidden_size=16, layer_idx=0):
        super().__init__()
        self.hidden_size = hidden_size
        self.layer_idx = layer_idx
        self.i_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.f_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.g_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.g_norm = nn.LayerNorm(hidden_size)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask=None, lower_bound=None):
        i = self.i_proj(hidden_states)
        f = self.f_proj(hidden_states)

        f = F.logsigmoid(f)
        # the lower bound for the first layer is zero
        if lower_bound is not None and self.layer_idx > 0:
            f = torch.logaddexp(lower_bound.log(), torch.log1p(-lower_bound) + f).to(f)
        i = swiglu(i, 1 - f.exp())

        # dealing with left-padding
        if attention_mask is not None:
            i = i.mul_(attention_mask[:, -i.shape[-2]:, None])

        o, recurrent_state = naive_recurrent_hgrn(x=i, g=f)
        o = self.g_norm(o) * torch.sigmoid(self.g_proj(hidden_states))
        o = self.o_proj(o)
        return o, None, recurrent_state


def main():
    layers = nn.ModuleList([HGRNAttention(16, layer_idx=0), HGRNAttention(16, layer_idx=1)])
    lower_bounds = torch.tensor([0.0, 0.5])
    hidden_states = torch.randn(2, 6, 16)
    attention_mask = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]], dtype=torch.float)
    for idx, layer in enumerate(layers):
        lower_bound = lower_bounds[idx].expand(16) if idx > 0 else None
        out, _, _ = layer(hidden_states, attention_mask=attention_mask, lower_bound=lower_bound)
        hidden_states = hidden_states + out
    loss = hidden_states.pow(2).mean()
    loss.backward()
    return loss.detach(), layers[0].i_proj.weight.grad, layers[1].f_proj.weight.grad


loss, i_proj_grad, f_proj_grad = main()
