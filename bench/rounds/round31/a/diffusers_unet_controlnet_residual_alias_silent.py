# label: hazard silent
# why: UNet2DConditionModel adds the ControlNet residuals with `down_block_res_sample += down_block_additional_residual`; the last entry of down_block_res_samples is the very tensor `sample` that is fed to mid_block next, so the mid block silently receives sample + residual and the ControlNet's contribution is counted twice.
# source: https://github.com/huggingface/diffusers/pull/3234
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResnetBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels, groups=4, output_scale_factor=1.0):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_channels)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = nn.GroupNorm(groups, out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.nonlinearity = nn.SiLU()
        self.output_scale_factor = output_scale_factor
        self.conv_shortcut = None
        if in_channels != out_channels:
            self.conv_shortcut = nn.Conv2d(in_channels, out_channels, 1)

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


class Upsample2D(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, hidden_states):
        hidden_states = F.interpolate(hidden_states, scale_factor=2.0, mode="nearest")
        return self.conv(hidden_states)


class DownBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels, num_layers=1, add_downsample=True):
        super().__init__()
        self.resnets = nn.ModuleList(
            [ResnetBlock2D(in_channels if i == 0 else out_channels, out_channels, temb_channels) for i in range(num_layers)]
        )
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
    def __init__(self, in_channels, temb_channels):
        super().__init__()
        self.resnets = nn.ModuleList([ResnetBlock2D(in_channels, in_channels, temb_channels)])

    def forward(self, hidden_states, temb=None):
        for resnet in self.resnets:
            hidden_states = resnet(hidden_states, temb)
        return hidden_states


class UpBlock2D(nn.Module):
    def __init__(self, in_channels, prev_output_channel, out_channels, temb_channels, num_layers=2, add_upsample=True):
        super().__init__()
        resnets = []
        for i in range(num_layers):
            res_skip_channels = in_channels if (i == num_layers - 1) else out_channels
            resnet_in_channels = prev_output_channel if i == 0 else out_channels
            resnets.append(ResnetBlock2D(resnet_in_channels + res_skip_channels, out_channels, temb_channels))
        self.resnets = nn.ModuleList(resnets)
        self.upsamplers = nn.ModuleList([Upsample2D(out_channels)]) if add_upsample else None

    def forward(self, hidden_states, res_hidden_states_tuple, temb=None):
        for resnet in self.resnets:
            res_hidden_states = res_hidden_states_tuple[-1]
            res_hidden_states_tuple = res_hidden_states_tuple[:-1]
            hidden_states = torch.cat([hidden_states, res_hidden_states], dim=1)
            hidden_states = resnet(hidden_states, temb)
        if self.upsamplers is not None:
            for upsampler in self.upsamplers:
                hidden_states = upsampler(hidden_states)
        return hidden_states


def timestep_embedding(timesteps, dim):
    half = dim // 2
    freqs = torch.exp(-torch.arange(half, dtype=torch.float32) * (torch.log(torch.tensor(10000.0)) / half))
    args = timesteps[:, None].float() * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=-1)


class UNet2DConditionModel(nn.Module):
    def __init__(self, in_channels=4, block_out_channels=(8, 16), temb_channels=16):
        super().__init__()
        self.conv_in = nn.Conv2d(in_channels, block_out_channels[0], 3, padding=1)
        self.time_embedding = nn.Sequential(nn.Linear(8, temb_channels), nn.SiLU(), nn.Linear(temb_channels, temb_channels))
        self.down_blocks = nn.ModuleList()
        output_channel = block_out_channels[0]
        for i, ch in enumerate(block_out_channels):
            input_channel = output_channel
            output_channel = ch
            is_final_block = i == len(block_out_channels) - 1
            self.down_blocks.append(DownBlock2D(input_channel, output_channel, temb_channels, add_downsample=not is_final_block))
        self.mid_block = UNetMidBlock2D(block_out_channels[-1], temb_channels)
        self.up_blocks = nn.ModuleList()
        reversed_block_out_channels = list(reversed(block_out_channels))
        output_channel = reversed_block_out_channels[0]
        for i, ch in enumerate(reversed_block_out_channels):
            prev_output_channel = output_channel
            output_channel = ch
            input_channel = reversed_block_out_channels[min(i + 1, len(block_out_channels) - 1)]
            is_final_block = i == len(block_out_channels) - 1
            self.up_blocks.append(
                UpBlock2D(input_channel, prev_output_channel, output_channel, temb_channels, add_upsample=not is_final_block)
            )
        self.conv_norm_out = nn.GroupNorm(4, block_out_channels[0])
        self.conv_out = nn.Conv2d(block_out_channels[0], in_channels, 3, padding=1)

    def forward(self, sample, timestep, down_block_additional_residuals=None, mid_block_additional_residual=None):
        # 1. time
        emb = self.time_embedding(timestep_embedding(timestep, 8))

        # 2. pre-process
        sample = self.conv_in(sample)

        # 3. down
        down_block_res_samples = (sample,)
        for downsample_block in self.down_blocks:
            sample, res_samples = downsample_block(hidden_states=sample, temb=emb)
            down_block_res_samples += res_samples

        if down_block_additional_residuals is not None:
            new_down_block_res_samples = ()

            for down_block_res_sample, down_block_additional_residual in zip(
                down_block_res_samples, down_block_additional_residuals
            ):
                down_block_res_sample += down_block_additional_residual  # <-- IPL002
                new_down_block_res_samples += (down_block_res_sample,)

            down_block_res_samples = new_down_block_res_samples

        # 4. mid
        sample = self.mid_block(sample, emb)

        if mid_block_additional_residual is not None:
            sample = sample + mid_block_additional_residual

        # 5. up
        for upsample_block in self.up_blocks:
            res_samples = down_block_res_samples[-len(upsample_block.resnets):]
            down_block_res_samples = down_block_res_samples[: -len(upsample_block.resnets)]
            sample = upsample_block(hidden_states=sample, res_hidden_states_tuple=res_samples, temb=emb)

        # 6. post-process
        sample = self.conv_out(F.silu(self.conv_norm_out(sample)))
        return sample


class ControlNetModel(nn.Module):
    """Emits one zero-conv residual per UNet skip connection, plus one for the mid block."""

    def __init__(self, in_channels=4, cond_channels=3, skip_channels=(8, 8, 8, 16), mid_channels=16):
        super().__init__()
        self.controlnet_cond_embedding = nn.Conv2d(cond_channels, 8, 3, padding=1)
        self.conv_in = nn.Conv2d(in_channels, 8, 3, padding=1)
        self.down = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.controlnet_down_blocks = nn.ModuleList([nn.Conv2d(8, c, 1) for c in skip_channels])
        self.controlnet_mid_block = nn.Conv2d(8, mid_channels, 1)

    def forward(self, sample, controlnet_cond):
        h = self.conv_in(sample) + self.controlnet_cond_embedding(controlnet_cond)
        h_low = self.down(F.silu(h))
        feats = (h, h, h_low, h_low)
        down_block_res_samples = tuple(block(f) for block, f in zip(self.controlnet_down_blocks, feats))
        mid_block_res_sample = self.controlnet_mid_block(h_low)
        return down_block_res_samples, mid_block_res_sample


def main():
    unet = UNet2DConditionModel()
    unet.requires_grad_(False)  # train_controlnet.py: only the ControlNet is trained
    controlnet = ControlNetModel()

    noisy_latents = torch.randn(2, 4, 8, 8)
    timesteps = torch.tensor([10, 500])
    controlnet_image = torch.rand(2, 3, 8, 8)
    target = torch.randn(2, 4, 8, 8)

    down_block_res_samples, mid_block_res_sample = controlnet(noisy_latents, controlnet_image)
    model_pred = unet(
        noisy_latents,
        timesteps,
        down_block_additional_residuals=down_block_res_samples,
        mid_block_additional_residual=mid_block_res_sample,
    )
    loss = F.mse_loss(model_pred, target)
    loss.backward()
    return model_pred.detach(), controlnet.controlnet_mid_block.weight.grad, controlnet.conv_in.weight.grad


model_pred, mid_grad, conv_in_grad = main()
