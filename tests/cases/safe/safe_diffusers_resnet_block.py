# label: safe
# why: diffusers ResnetBlock2D: GroupNorm -> SiLU(inplace) -> conv, `hidden_states += temb` on a conv output, then `(input + hidden) / scale`; GroupNorm and conv keep their inputs, not their outputs.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResnetBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels, groups=2, output_scale_factor=1.0):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_channels)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = nn.GroupNorm(groups, out_channels)
        self.dropout = nn.Dropout(0.0)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.nonlinearity = nn.SiLU(inplace=True)
        self.output_scale_factor = output_scale_factor
        self.conv_shortcut = nn.Conv2d(in_channels, out_channels, 1) if in_channels != out_channels else None

    def forward(self, input_tensor, temb):
        hidden_states = input_tensor
        hidden_states = self.norm1(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.conv1(hidden_states)
        temb = self.time_emb_proj(F.silu(temb))[:, :, None, None]
        hidden_states += temb
        hidden_states = self.norm2(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.conv2(hidden_states)
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor)
        output_tensor = (input_tensor + hidden_states) / self.output_scale_factor
        return output_tensor


def timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-torch.log(torch.tensor(float(max_period))) * torch.arange(half) / half)
    args = timesteps[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


torch.manual_seed(0)
blocks = nn.ModuleList([ResnetBlock2D(4, 8, 6), ResnetBlock2D(8, 8, 6, output_scale_factor=2.0)])
sample = torch.randn(2, 4, 6, 6)
t = torch.tensor([3, 17])
temb = timestep_embedding(t, 6)
h = sample
for blk in blocks:
    h = blk(h, temb)
noise = torch.randn_like(h)
loss = F.mse_loss(h, noise)
loss.backward()
