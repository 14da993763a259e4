# label: safe
# why: in the asymmetric branch the all-zero rows are patched in place on the minimum/maximum outputs; those ops save their inputs, not their outputs, and nothing else consumed wmin/wmax before the writes
# source: https://github.com/intel/auto-round (file auto_round/utils.py, quant_weight_asym)
import torch

torch.manual_seed(0)


def round_ste(x):
    return (x.round() - x).detach() + x


def quant_weight_asym(weight, num_bits=4, v=0, min_scale=0, max_scale=0, scale_dtype=torch.float32):
    maxq = torch.tensor(2 ** num_bits - 1)
    zeros = torch.zeros(weight.shape[0], device=weight.device, dtype=scale_dtype)
    if isinstance(min_scale, torch.Tensor):
        wmin_tmp = torch.minimum(weight.min(1)[0], zeros)
        wmax_tmp = torch.maximum(weight.max(1)[0], zeros)
        wmin_tmp *= min_scale + 1.0
        wmax_tmp *= max_scale + 1.0
        wmax = torch.maximum(wmax_tmp, wmin_tmp)
        wmin = torch.minimum(wmax_tmp, wmin_tmp)
    else:
        wmin = torch.minimum(weight.min(1)[0], zeros)
        wmax = torch.maximum(weight.max(1)[0], zeros)

    tmp = (wmin == 0) & (wmax == 0)
    wmin[tmp] = -1
    wmax[tmp] = +1
    scale = ((wmax - wmin) / maxq).to(scale_dtype)
    zp = round_ste(-wmin / scale)
    scale = scale.unsqueeze(dim=-1)
    zp = zp.unsqueeze(dim=-1)
    int_w = round_ste(weight / scale + v)
    q = torch.clamp(int_w + zp, 0, maxq)
    return scale * (q - zp), scale, zp


class WrapperLinear(torch.nn.Module):
    def __init__(self, orig_layer, num_bits=4):
        super().__init__()
        self.orig_layer = orig_layer
        self.num_bits = num_bits
        self.value = torch.nn.Parameter(torch.zeros_like(orig_layer.weight))
        self.min_scale = torch.nn.Parameter(torch.zeros(orig_layer.weight.shape[0]))
        self.max_scale = torch.nn.Parameter(torch.zeros(orig_layer.weight.shape[0]))

    def forward(self, x):
        weight_q, _, _ = quant_weight_asym(self.orig_layer.weight, self.num_bits, self.value,
                                           self.min_scale, self.max_scale)
        return torch.nn.functional.linear(x, weight_q, self.orig_layer.bias)


layer = torch.nn.Linear(6, 4)
w = torch.randn(4, 6) * 0.3
w[1] = 0.0
layer.weight = torch.nn.Parameter(w, requires_grad=False)
wrapped = WrapperLinear(layer)
x = torch.randn(3, 6)
with torch.no_grad():
    ref = layer(x)
out = wrapped(x)
loss = (out - ref).pow(2).mean()
loss.backward()
min_scale_grad = wrapped.min_scale.grad
value_grad = wrapped.value.grad
