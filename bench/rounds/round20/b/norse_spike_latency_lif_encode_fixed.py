# label: safe
# why: after the fix the mask is accumulated with `mask += z` but torch.where only ever sees the fresh comparison `mask > 0`, so the tensor autograd saved is never the one being written.
# source: https://github.com/norse/norse/commit/6f7f6229b907ee5c2f17a711aebbcaf1f4e0c0a6 (fixed version, PR #327)
from typing import NamedTuple, Tuple

import torch
import torch.nn as nn

torch.manual_seed(0)


class LIFParameters(NamedTuple):
    tau_syn_inv: torch.Tensor = torch.as_tensor(1.0 / 5e-3)
    tau_mem_inv: torch.Tensor = torch.as_tensor(1.0 / 1e-2)
    v_leak: torch.Tensor = torch.as_tensor(0.0)
    v_th: torch.Tensor = torch.as_tensor(1.0)
    v_reset: torch.Tensor = torch.as_tensor(0.0)
    method: str = "super"
    alpha: float = 100.0


class SuperSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_tensor, alpha):
        ctx.save_for_backward(input_tensor)
        ctx.alpha = alpha
        return torch.gt(input_tensor, torch.as_tensor(0.0)).to(input_tensor.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (inp,) = ctx.saved_tensors
        grad = grad_output / (ctx.alpha * torch.abs(inp) + 1.0).pow(2)
        return grad, None


def threshold(x, method, alpha):
    return SuperSpike.apply(x, alpha)


def lif_current_encoder(
    input_current: torch.Tensor,
    voltage: torch.Tensor,
    p: LIFParameters = LIFParameters(),
    dt: float = 0.001,
) -> Tuple[torch.Tensor, torch.Tensor]:
    dv = dt * p.tau_mem_inv * ((p.v_leak - voltage) + input_current)
    voltage = voltage + dv
    z = threshold(voltage - p.v_th, p.method, p.alpha)

    voltage = voltage - z * (voltage - p.v_reset)
    return z, voltage


def spike_latency_lif_encode(
    input_current: torch.Tensor,
    seq_length: int,
    p: LIFParameters = LIFParameters(),
    dt=0.001,
) -> torch.Tensor:
    voltage = torch.zeros_like(input_current)
    z = torch.zeros_like(input_current)
    mask = torch.zeros_like(input_current)
    zeros_mask = torch.zeros_like(input_current)
    spikes = []

    for _ in range(seq_length):
        z, voltage = lif_current_encoder(
            input_current=input_current, voltage=voltage, p=p, dt=dt
        )
        spikes.append(torch.where(mask > 0, zeros_mask, z))
        mask += z

    return torch.stack(spikes)


def main():
    # a small model in front of the encoder, trained through the spike train
    model = nn.Sequential(nn.Linear(4, 8), nn.Softplus())
    x = torch.rand(3, 4) * 40.0
    current = model(x) * 60.0
    spikes = spike_latency_lif_encode(current, seq_length=20)
    readout = torch.linspace(1.0, 0.0, 20).view(20, 1, 1)
    loss = (spikes * readout).sum()
    loss.backward()
    return loss.detach(), model[0].weight.grad


loss, weight_grad = main()
