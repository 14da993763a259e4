# label: hazard raises
# why: With ControlNet residuals the UNet adds them with down_block_res_sample += ..., mutating skip tensors that the next ResnetBlock2D's GroupNorm saved as input, so training the UNet together with the ControlNet fails in backward.
# source: https://github.com/huggingface/diffusers/pull/2586
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResnetBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels=8, groups=2):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_channels)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = nn.GroupNorm(groups, out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.nonlinearity = nn.SiLU()
        self.output_scale_factor = 1.0
        self.conv_shortcut = nn.Conv2d(in_channels, out_channels, 1) if in_channels != out_channels else None

    def forward(self, input_tensor, temb):
        hidden_states = input_tensor
        hidden_states = self.norm1(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.conv1(hidden_states)
        temb = self.time_emb_proj(self.nonlinearity(temb))[:, :, None, None]
        hidden_states = hidden_states + temb
        hidden_states = self.norm2(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.conv2(hidden_states)
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor)
        output_tensor = (input_tensor + hidden_states) / self.output_scale_factor
        return output_tensor


class Downsample2D(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, stride=2, padding=1)

    def forward(self, hidden_states):
        return self.conv(hidden_states)


class DownBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, num_layers=2, add_downsample=True):
        super().__init__()
        self.resnets = nn.ModuleList([
            ResnetBlock2D(in_channels if i == 0 else out_channels, out_channels) for i in range(num_layers)])
        self.downsamplers = nn.ModuleList([Downsample2D(out_channels)]) if add_downsample else None

    def forward(self, hidden_states, temb=None):
        output_states = ()
        for resnet in self.resnets:
            hidden_states = resnet(hidden_states, temb)
            output_states += (hidden_states,)
        if self.downsamplers is not None:
            for downsampler in self.downsamplers:
                hidden_states = downsampler(hidden_states)
            output_states += (hidden_states,)
        return hidden_states, output_states


class UNetMidBlock2D(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.resnets = nn.ModuleList([ResnetBlock2D(channels, channels), ResnetBlock2D(channels, channels)])

    def forward(self, hidden_states, temb=None):
        for resnet in self.resnets:
            hidden_states = resnet(hidden_states, temb)
        return hidden_states


class UpBlock2D(nn.Module):
    def __init__(self, in_channels, prev_output_channel, out_channels, num_layers=3, add_upsample=True):
        super().__init__()
        resnets = []
        for i in range(num_layers):
            res_skip_channels = in_channels if (i == num_layers - 1) else out_channels
            resnet_in_channels = prev_output_channel if i == 0 else out_channels
            resnets.append(ResnetBlock2D(resnet_in_channels + res_skip_channels, out_channels))
        self.resnets = nn.ModuleList(resnets)
        self.add_upsample = add_upsample

    def forward(self, hidden_states, res_hidden_states_tuple, temb=None):
        for resnet in self.resnets:
            res_hidden_states = res_hidden_states_tuple[-1]
            res_hidden_states_tuple = res_hidden_states_tuple[:-1]
            hidden_states = torch.cat([hidden_states, res_hidden_states], dim=1)
            hidden_states = resnet(hidden_states, temb)
        if self.add_upsample:
            hidden_states = F.interpolate(hidden_states, scale_factor=2.0, mode="nearest")
        return hidden_states


def get_timestep_embedding(timesteps, embedding_dim):
    half_dim = embedding_dim // 2
    exponent = -torch.log(torch.tensor(10000.0)) * torch.arange(half_dim, dtype=torch.float32) / half_dim
    emb = timesteps[:, None].float() * torch.exp(exponent)[None, :]
    return torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)


class UNet2DConditionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(3, 4, 3, padding=1)
        self.time_embedding = nn.Sequential(nn.Linear(8, 8), nn.SiLU(), nn.Linear(8, 8))
        self.down_blocks = nn.ModuleList([DownBlock2D(4, 4, add_downsample=True), DownBlock2D(4, 8, add_downsample=False)])
        self.mid_block = UNetMidBlock2D(8)
        self.up_blocks = nn.ModuleList([UpBlock2D(4, 8, 8, add_upsample=True), UpBlock2D(4, 8, 4, add_upsample=False)])
        self.conv_norm_out = nn.GroupNorm(2, 4)
        self.conv_act = nn.SiLU()
        self.conv_out = nn.Conv2d(4, 3, 3, padding=1)

    def forward(self, sample, timestep, down_block_additional_residuals=None, mid_block_additional_residual=None):
        emb = self.time_embedding(get_timestep_embedding(timestep, 8))

        sample = self.conv_in(sample)

        down_block_res_samples = (sample,)
        for downsample_block in self.down_blocks:
            sample, res_samples = downsample_block(hidden_states=sample, temb=emb)
            down_block_res_samples += res_samples

        if down_block_additional_residuals is not None:
            new_down_block_res_samples = ()

            for down_block_res_sample, down_block_additional_residual in zip(
                down_block_res_samples, down_block_additional_residuals
            ):
                down_block_res_sample += down_block_additional_residual  # <-- IPL001: skip tensor was saved by the next resnet's GroupNorm
                new_down_block_res_samples += (down_block_res_sample,)

            down_block_res_samples = new_down_block_res_samples

        sample = self.mid_block(sample, emb)

        if mid_block_additional_residual is not None:
            sample += mid_block_additional_residual

        for i, upsample_block in enumerate(self.up_blocks):
            res_samples = down_block_res_samples[-len(upsample_block.resnets):]
            down_block_res_samples = down_block_res_samples[: -len(upsample_block.resnets)]
            sample = upsample_block(hidden_states=sample, temb=emb, res_hidden_states_tuple=res_samples)

        sample = self.conv_norm_out(sample)
        sample = self.conv_act(sample)
        sample = self.conv_out(sample)
        return sample


class ControlNetModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.controlnet_cond_embedding = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.SiLU())
        self.controlnet_down_blocks = nn.ModuleList([nn.Conv2d(4, c, 1) for c in (4, 4, 4, 4, 8, 8)])
        self.controlnet_mid_block = nn.Conv2d(4, 8, 1)

    def forward(self, controlnet_cond):
        feat8 = self.controlnet_cond_embedding(controlnet_cond)
        feat4 = F.avg_pool2d(feat8, 2)
        feats = (feat8, feat8, feat8, feat4, feat4, feat4)
        down_block_res_samples = tuple(block(f) for block, f in zip(self.controlnet_down_blocks, feats))
        mid_block_res_sample = self.controlnet_mid_block(feat4)
        return down_block_res_samples, mid_block_res_sample


unet = UNet2DConditionModel()
controlnet = ControlNetModel()
params = list(unet.parameters()) + list(controlnet.parameters())
optimizer = torch.optim.AdamW(params, lr=1e-4)

latents = torch.randn(2, 3, 8, 8)
noise = torch.randn_like(latents)
timesteps = torch.randint(0, 1000, (2,))
noisy_latents = latents + 0.5 * noise
controlnet_image = torch.rand(2, 3, 8, 8)

down_block_res_samples, mid_block_res_sample = controlnet(controlnet_image)
model_pred = unet(
    noisy_latents,
    timesteps,
    down_block_additional_residuals=down_block_res_samples,
    mid_block_additional_residual=mid_block_res_sample,
)
loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
loss.backward()
