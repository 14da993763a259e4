# label: hazard raises
# why: conv1d_step rolls and overwrites conv_state in place every step, but the previous step's `conv_state * conv1d_weight` saved that same state tensor for backward, so BPTT through the step-wise loop fails.
# source: https://github.com/NX-AI/xlstm/pull/82
import torch
import torch.nn as nn

torch.manual_seed(0)


def conv1d_step(x, conv_state, conv1d_weight, conv1d_bias=None):
    """
    B: batch size
    S: sequence length
    D: feature dimension
    KS: kernel size
    Args:
        x (torch.Tensor): (B, S, D)
        conv_state (torch.Tensor): (B, KS, D)
        conv1d_weight (torch.Tensor): (KS, D)
    """
    assert x.shape[0] == conv_state.shape[0]
    assert x.shape[2] == conv_state.shape[2]
    assert x.shape[1] == 1, f"x has sequence length {x.shape[1]} but it should be 1"
    conv_state.copy_(torch.roll(conv_state, shifts=-1, dims=1))  # <-- IPL001: state saved by the previous step's multiply
    conv_state[:, -1:, :] = x  # <-- IPL001: same saved state written again
    y = torch.sum(conv_state * conv1d_weight, dim=1, keepdim=True)
    if conv1d_bias is not None:
        y += conv1d_bias
    return y, conv_state


class CausalConv1d(nn.Module):
    def __init__(self, feature_dim, kernel_size=4):
        super().__init__()
        self.kernel_size = kernel_size
        self.conv = nn.Conv1d(feature_dim, feature_dim, kernel_size, groups=feature_dim, padding=kernel_size - 1)

    def step(self, x, conv_state=None):
        if conv_state is None:
            conv_state = torch.zeros(x.shape[0], self.kernel_size, x.shape[2], device=x.device, dtype=x.dtype)
        y, conv_state = conv1d_step(
            x,
            conv_state,
            self.conv.weight[:, 0, :].transpose(0, 1),  # rearrange(, "D 1 KS -> KS D")
            conv1d_bias=self.conv.bias,
        )
        return y, (conv_state,)


class mLSTMLayerStep(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.proj_up = nn.Linear(dim, dim)
        self.conv1d = CausalConv1d(dim)
        self.proj_down = nn.Linear(dim, dim)

    def step(self, x, conv_state=None):
        x_inner = self.proj_up(x)
        x_conv, conv_state = self.conv1d.step(x_inner, conv_state=conv_state[0] if conv_state else None)
        h = self.proj_down(torch.nn.functional.silu(x_conv))
        return h, {"conv_state": conv_state}


layer = mLSTMLayerStep()
seq = torch.randn(2, 5, 6)
target = torch.randn(2, 5, 6)
state = None
outputs = []
for t in range(seq.shape[1]):
    h, st = layer.step(seq[:, t:t + 1], conv_state=state)
    state = st["conv_state"]
    outputs.append(h)
out = torch.cat(outputs, dim=1)
loss = (out - target).pow(2).mean()
loss.backward()
