# label: hazard raises no-twin
# why: the LSNN state returned by one training step still carries that step's graph, so the next loss.backward() runs back into it after optimizer.step() has already updated, in place, the weights that graph saved.
# source: https://github.com/norse/norse/issues/163 (test and fix: commits 3a947bacc608f96f9a57b10c11e164034ad44008, 494c2b0ef824f67a96015aa51ad5c1b7da6c17b0)
from typing import NamedTuple, Tuple

import torch
from torch import nn

torch.manual_seed(0)


class LSNNParameters(NamedTuple):
    tau_syn_inv: torch.Tensor = torch.as_tensor(1.0 / 5e-3)
    tau_mem_inv: torch.Tensor = torch.as_tensor(1.0 / 1e-2)
    tau_adapt_inv: torch.Tensor = torch.as_tensor(1.0 / 700)
    v_leak: torch.Tensor = torch.as_tensor(0.0)
    v_th: torch.Tensor = torch.as_tensor(1.0)
    v_reset: torch.Tensor = torch.as_tensor(0.0)
    beta: torch.Tensor = torch.as_tensor(1.8)
    alpha: float = 100.0


class LSNNState(NamedTuple):
    z: torch.Tensor
    v: torch.Tensor
    i: torch.Tensor
    b: torch.Tensor


class SuperSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_tensor, alpha):
        ctx.save_for_backward(input_tensor)
        ctx.alpha = alpha
        return torch.gt(input_tensor, 0.0).to(input_tensor.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (inp,) = ctx.saved_tensors
        return grad_output / (ctx.alpha * torch.abs(inp) + 1.0).pow(2), None


def lsnn_step(input_tensor, state, input_weights, recurrent_weights, p=LSNNParameters(), dt=0.001):
    dv = dt * p.tau_mem_inv * ((p.v_leak - state.v) + state.i)
    v_decayed = state.v + dv
    di = -dt * p.tau_syn_inv * state.i
    i_decayed = state.i + di
    db = dt * p.tau_adapt_inv * (p.v_th - state.b)
    b_decayed = state.b + db
    z_new = SuperSpike.apply(v_decayed - b_decayed, p.alpha)
    v_new = (1 - z_new) * v_decayed + z_new * p.v_reset
    i_new = (
        i_decayed
        + torch.nn.functional.linear(input_tensor, input_weights)
        + torch.nn.functional.linear(state.z, recurrent_weights)
    )
    b_new = b_decayed + z_new * p.tau_adapt_inv * p.beta
    return z_new, LSNNState(z_new, v_new, i_new, b_new)


class LSNNLayer(nn.Module):
    def __init__(self, input_size, hidden_size, p=LSNNParameters()):
        super().__init__()
        self.hidden_size = hidden_size
        self.p = p
        self.input_weights = nn.Parameter(torch.randn(hidden_size, input_size) * (2 / hidden_size) ** 0.5 * 20)
        self.recurrent_weights = nn.Parameter(torch.randn(hidden_size, hidden_size) * (2 / hidden_size) ** 0.5)

    def forward(self, input_tensor, state=None):
        T, B, _ = input_tensor.shape
        if state is None:
            zeros = torch.zeros(B, self.hidden_size)
            state = LSNNState(zeros, zeros, zeros, zeros)
        outputs = []
        for ts in range(T):
            z, state = lsnn_step(input_tensor[ts], state, self.input_weights, self.recurrent_weights, self.p)
            outputs.append(z)
        return torch.stack(outputs), state


class SequentialState(nn.Module):
    def __init__(self, lsnn, readout):
        super().__init__()
        self.lsnn = lsnn
        self.readout = readout

    def forward(self, x, state=None):
        spikes, state = self.lsnn(x, state)
        return self.readout(spikes.mean(0)), state


def main():
    model = SequentialState(LSNNLayer(12, 32), nn.Linear(32, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0001)
    loss_func = nn.MSELoss()
    data = torch.rand(3, 20, 4, 12)
    target = torch.ones(4, 10)
    state = None
    for x in data:
        out, state = model(x, state)
        loss = loss_func(out, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # <-- IPL001
    return loss.detach(), model.lsnn.input_weights.detach().clone()


loss, input_weights = main()
