# label: hazard raises
# why: the Mamba step used during training keeps conv_state / ssm_state caches across tokens and updates them with copy_ and slice assignment, overwriting states that the previous step's multiply saved for backward.
# source: https://github.com/SuGuilin/IJCAI2025-CMFS/issues/1
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MambaStep(nn.Module):
    def __init__(self, d_model=4, d_state=4, d_conv=3, expand=2):
        super().__init__()
        self.d_model = d_model
        self.d_state = d_state
        self.d_conv = d_conv
        self.d_inner = int(expand * d_model)
        self.dt_rank = math.ceil(d_model / 16)
        self.in_proj = nn.Linear(d_model, self.d_inner * 2, bias=False)
        self.conv1d = nn.Conv1d(self.d_inner, self.d_inner, bias=True, kernel_size=d_conv, groups=self.d_inner, padding=d_conv - 1)
        self.act = nn.SiLU()
        self.x_proj = nn.Linear(self.d_inner, self.dt_rank + d_state * 2, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner, bias=True)
        A = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(self.d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(self.d_inner))
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def allocate_inference_cache(self, batch_size):
        conv_state = torch.zeros(batch_size, self.d_inner, self.d_conv)
        ssm_state = torch.zeros(batch_size, self.d_inner, self.d_state)
        return conv_state, ssm_state

    def step(self, hidden_states, conv_state, ssm_state):
        dtype = hidden_states.dtype
        xz = self.in_proj(hidden_states.squeeze(1))  # (B 2D)
        x, z = xz.chunk(2, dim=-1)  # (B D)

        # Conv step
        conv_state.copy_(torch.roll(conv_state, shifts=-1, dims=-1))  # <-- IPL001: overwrites the state the previous step multiplied with the conv weight
        conv_state[:, :, -1] = x  # <-- IPL001: overwrites the state the previous step multiplied with the conv weight
        x = torch.sum(conv_state * self.conv1d.weight.squeeze(1), dim=-1)  # (B D)
        if self.conv1d.bias is not None:
            x = x + self.conv1d.bias
        x = self.act(x).to(dtype=dtype)

        x_db = self.x_proj(x)  # (B dt_rank+2*d_state)
        dt, B, C = torch.split(x_db, [self.dt_rank, self.d_state, self.d_state], dim=-1)
        dt = F.linear(dt, self.dt_proj.weight)  # (B d_inner)
        A = -torch.exp(self.A_log.float())  # (d_inner, d_state)

        # SSM step
        dt = F.softplus(dt + self.dt_proj.bias.to(dtype=dt.dtype))
        dA = torch.exp(torch.einsum("bd,dn->bdn", dt, A))
        dB = torch.einsum("bd,bn->bdn", dt, B)
        ssm_state.copy_(ssm_state * dA + x.unsqueeze(-1) * dB)  # <-- IPL001: overwrites the state that ssm_state * dA saved
        y = torch.einsum("bdn,bn->bd", ssm_state.to(dtype), C)
        y = y + self.D.to(dtype) * x
        y = y * self.act(z)  # (B D)

        out = self.out_proj(y)
        return out.unsqueeze(1), conv_state, ssm_state


class FusionScan(nn.Module):
    """Scans RGB and thermal tokens with a shared Mamba step (training-time use of the recurrent path)."""

    def __init__(self, d_model=4):
        super().__init__()
        self.mamba = MambaStep(d_model=d_model)
        self.head = nn.Linear(d_model, 2)

    def forward(self, tokens):
        B, L, _ = tokens.shape
        conv_state, ssm_state = self.mamba.allocate_inference_cache(B)
        outs = []
        for t in range(L):
            out, conv_state, ssm_state = self.mamba.step(tokens[:, t:t + 1], conv_state, ssm_state)
            outs.append(out)
        return self.head(torch.cat(outs, dim=1).mean(1))


model = FusionScan()
rgb_tokens = torch.randn(2, 3, 4)
thermal_tokens = torch.randn(2, 3, 4)
logits = model(torch.cat([rgb_tokens, thermal_tokens], dim=1))
loss = F.cross_entropy(logits, torch.tensor([0, 1]))
loss.backward()
